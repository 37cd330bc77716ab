"""Making a loaded conversation one the API accepts, whatever a crash or a damaged line left.

The API requires a user message first, and every `tool_use` answered by exactly one
`tool_result` at the start of the next message. A crash mid-turn leaves tool calls unanswered; a
corrupt line can lose a call or its answer. On a conversation that is already valid this changes
nothing, so a resumed session sees exactly what the agent held.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mini_claude import prompts

Message = dict[str, Any]
Block = dict[str, Any]


@dataclass
class Repaired:
    messages: list[Message]
    repairs: list[str]  # one line per kind of change, for the user
    prepended: int  # messages inserted before the first one (0 or 1): later indexes move by this


def repair_conversation(messages: list[Message]) -> Repaired:
    """A copy of `messages` in which every tool call is answered (calls cut off by the end of the
    session are marked interrupted) and no answer lacks its call. The input is not changed."""
    fixed = [{**message, "content": list(message["content"])} for message in messages]
    repairs: list[str] = []
    prepended = 0
    if fixed and fixed[0]["role"] == "assistant":
        fixed.insert(0, {"role": "user", "content": [_gap_note()]})
        prepended = 1
        repairs.append("the conversation's first message could not be read; a note stands in for it")
    answered = dropped = 0
    for index, message in enumerate(fixed):
        if message["role"] != "user":
            continue
        calls = _tool_use_ids(fixed[index - 1]) if index > 0 else []
        message["content"], added, removed = _answer_calls(message["content"], calls)
        answered, dropped = answered + added, dropped + removed
    if fixed and (calls := _tool_use_ids(fixed[-1])):
        fixed.append({"role": "user", "content": [_interrupted_result(tool_id) for tool_id in calls]})
        answered += len(calls)
    if answered:
        repairs.append(
            f"{_calls(answered)} left without a result when the session ended: answered as interrupted"
        )
    if dropped:
        repairs.append(f"{dropped} tool result(s) whose call could not be read were left out")
    return Repaired(fixed, repairs, prepended)


def _answer_calls(content: list[Block], calls: list[str]) -> tuple[list[Block], int, int]:
    """(content with one result per call, first and in call order; results added; results dropped)."""
    results: dict[str, Block] = {}
    others: list[Block] = []
    dropped = 0
    for block in content:
        if block.get("type") != "tool_result":
            others.append(block)
        elif block.get("tool_use_id") in calls and block["tool_use_id"] not in results:
            results[block["tool_use_id"]] = block
        else:
            dropped += 1
    answers = [results.get(tool_id) or _interrupted_result(tool_id) for tool_id in calls]
    repaired = answers + others
    return repaired or [_gap_note()], len(calls) - len(results), dropped


def _tool_use_ids(message: Message) -> list[str]:
    if message["role"] != "assistant":
        return []
    return [block["id"] for block in message["content"] if block.get("type") == "tool_use"]


def _interrupted_result(tool_use_id: str) -> Block:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": prompts.notice("session_ended_mid_call"),
        "is_error": True,
    }


def _gap_note() -> Block:
    return {"type": "text", "text": prompts.notice("transcript_gap")}


def _calls(count: int) -> str:
    return "1 tool call" if count == 1 else f"{count} tool calls"
