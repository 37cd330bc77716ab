"""Making a loaded conversation one the API accepts, whatever a crash or a damaged line left.

Each block is valid on its own already (content.py); what is checked here is the whole: no text
block that is only whitespace, a user message first and roles alternating, every tool_use id
used once, and every `tool_use` answered by exactly one `tool_result` at the start of the next
message. A crash mid-turn leaves tool calls unanswered; a corrupt line can lose a call, its
answer or a whole message. On a conversation that is already valid this changes nothing, so a
resumed session sees exactly what the agent held.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mini_claude.core import prompts

Message = dict[str, Any]
Block = dict[str, Any]


@dataclass
class Repaired:
    messages: list[Message]
    repairs: list[str]  # one line per kind of change, for the user
    # For each index of the messages given, where that message's content now starts (one more
    # entry for the end): a summary standing for `messages[:n]` now stands for `[:new_index(n)]`.
    index_map: list[int]
    appended: list[Block] = field(default_factory=list)  # answers added at the very end

    def new_index(self, old: int) -> int:
        return self.index_map[min(max(old, 0), len(self.index_map) - 1)]


def repair_conversation(messages: list[Message]) -> Repaired:
    """A copy of `messages` the API accepts: see the module's docstring. Tool calls cut off by the
    end of the session are answered as interrupted (those at the very end also in `appended`,
    for the caller to save). The input is not changed."""
    fixed, index_map, emptied = _without_empty_text(messages)
    repairs: list[str] = []
    if emptied:
        repairs.append(f"{_count(emptied, 'empty text block')} left out")
    if fixed and fixed[0]["role"] == "assistant":
        fixed.insert(0, {"role": "user", "content": [_gap_note()]})
        index_map = [index + 1 for index in index_map]
        repairs.append("the conversation's first message could not be read; a note stands in for it")
    renamed = _rename_repeated_ids(fixed)
    if renamed:
        repairs.append(f"{_count(renamed, 'repeated tool call id')} made unique")
    answered = dropped = 0
    appended: list[Block] = []
    for index, message in enumerate(fixed):
        if message["role"] != "user":
            continue
        calls = _tool_use_ids(fixed[index - 1]) if index > 0 else []
        message["content"], added, removed = _answer_calls(message["content"], calls)
        answered, dropped = answered + len(added), dropped + removed
        if index == len(fixed) - 1:
            appended = added
    if fixed and (calls := _tool_use_ids(fixed[-1])):
        appended = [_interrupted_result(tool_id) for tool_id in calls]
        fixed.append({"role": "user", "content": list(appended)})
        answered += len(calls)
    if answered:
        repairs.append(
            f"{_count(answered, 'tool call')} left without a result when the session ended: "
            "answered as interrupted"
        )
    if dropped:
        repairs.append(f"{dropped} tool result(s) whose call could not be read were left out")
    return Repaired(fixed, repairs, index_map, appended)


def _without_empty_text(messages: list[Message]) -> tuple[list[Message], list[int], int]:
    """Copies without whitespace-only text (the API refuses it), a message left empty dropped and
    its neighbours, now of one role, merged; the index map (see Repaired); blocks left out."""
    fixed: list[Message] = []
    index_map: list[int] = []
    emptied = 0
    for message in messages:
        content = []
        for block in message["content"]:
            kept = _without_empty_parts(block)
            if kept is None:
                emptied += 1
            else:
                content.append(kept)
        if fixed and content and fixed[-1]["role"] == message["role"]:
            index_map.append(len(fixed) - 1)
            fixed[-1]["content"].extend(content)
        elif content:
            index_map.append(len(fixed))
            fixed.append({**message, "content": content})
        else:
            index_map.append(len(fixed))
    index_map.append(len(fixed))
    return fixed, index_map, emptied


def _without_empty_parts(block: Block) -> Block | None:
    if block["type"] == "text":
        return block if block["text"].strip() else None
    if block["type"] == "tool_result" and isinstance(block["content"], list):
        parts = [part for part in block["content"] if part["type"] != "text" or part["text"].strip()]
        return {**block, "content": parts or ""}
    return block


def _rename_repeated_ids(messages: list[Message]) -> int:
    """Give each tool_use whose id was used before a new one (`<id>_2`, …, never one in use), and
    the result answering it in the next message the same. Returns how many were renamed."""
    taken = {
        block["id"] for message in messages for block in message["content"] if block["type"] == "tool_use"
    }
    seen: set[str] = set()
    renamed = 0
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        now_called: dict[str, list[str]] = {}  # an id as stored → the ids its calls now have, in order
        content = []
        for block in message["content"]:
            if block["type"] == "tool_use":
                stored = block["id"]
                if stored in seen:
                    block = {**block, "id": _unused(stored, taken)}
                    renamed += 1
                seen.add(block["id"])
                now_called.setdefault(stored, []).append(block["id"])
            content.append(block)
        message["content"] = content
        if index + 1 < len(messages) and any(ids != [stored] for stored, ids in now_called.items()):
            messages[index + 1]["content"] = _renamed_results(messages[index + 1]["content"], now_called)
    return renamed


def _renamed_results(content: list[Block], now_called: dict[str, list[str]]) -> list[Block]:
    """The n-th result naming an id answers the n-th call that had it: it takes that call's id."""
    waiting = {stored: list(ids) for stored, ids in now_called.items()}
    renamed = []
    for block in content:
        if block["type"] == "tool_result" and waiting.get(block["tool_use_id"]):
            block = {**block, "tool_use_id": waiting[block["tool_use_id"]].pop(0)}
        renamed.append(block)
    return renamed


def _unused(tool_id: str, taken: set[str]) -> str:
    number = 2
    while (candidate := f"{tool_id}_{number}") in taken:
        number += 1
    taken.add(candidate)
    return candidate


def _tool_use_ids(message: Message) -> list[str]:
    if message["role"] != "assistant":
        return []
    return [block["id"] for block in message["content"] if block["type"] == "tool_use"]


def _answer_calls(content: list[Block], calls: list[str]) -> tuple[list[Block], list[Block], int]:
    """(content with one result per call, first and in call order; the results added; results dropped)."""
    results: dict[str, Block] = {}
    others: list[Block] = []
    dropped = 0
    for block in content:
        if block["type"] != "tool_result":
            others.append(block)
        elif block["tool_use_id"] in calls and block["tool_use_id"] not in results:
            results[block["tool_use_id"]] = block
        else:
            dropped += 1
    added = [_interrupted_result(tool_id) for tool_id in calls if tool_id not in results]
    answers = [results.get(tool_id) or _interrupted_result(tool_id) for tool_id in calls]
    repaired = answers + others
    return repaired or [_gap_note()], added, dropped


def _interrupted_result(tool_use_id: str) -> Block:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": prompts.notice("session_ended_mid_call"),
        "is_error": True,
    }


def _gap_note() -> Block:
    return {"type": "text", "text": prompts.notice("transcript_gap")}


def _count(count: int, thing: str) -> str:
    return f"1 {thing}" if count == 1 else f"{count} {thing}s"
