"""The user's turns in a conversation: where each message the user sent starts (what `/rewind` goes
back to), what they typed, and whether the turn ran shell commands or MCP tools (whose changes
no checkpoint can undo). A turn is what one message added: the context mini-claude put before it
(a `!command`'s output, attached files) and the text typed, in one user message; checkpoints
count turns the same way, from 0."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mini_claude.sessions.typed_input import SHELL_KEY, added_context, typed_text

SHELL_TOOL = "run_shell"
MCP_PREFIX = "mcp__"  # an MCP server's tool: it may change anything, as a command may
COMMANDS, MCP_TOOLS = "commands", "MCP tools"  # what ran that no checkpoint can undo, in this order

Message = dict[str, Any]


@dataclass(frozen=True)
class UserTurn:
    number: int  # 0 for the conversation's first message
    message: int  # the index of the user message it is in
    block: int  # the index of its first block there (earlier blocks answer the reply before it)
    text: str  # what the user typed (`!command · text` when they ran a command first)
    typed: str  # the message itself, without a command run before it
    ran: tuple[str, ...]  # COMMANDS (a `!command`, run_shell), MCP_TOOLS: what ran during it


def user_turns(messages: list[Message]) -> list[UserTurn]:
    turns: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.get("role") == "assistant":
            if turns:
                turns[-1]["ran"].update(filter(None, map(_untracked_kind, message.get("content", []))))
            continue
        start: int | None = None
        parts: list[str] = []
        shell = False
        for position, block in enumerate(message.get("content", [])):
            typed = typed_text(block)
            context = _context_kind(block)
            if typed is None and context is None:
                start, parts, shell = None, [], False
                continue
            start = position if start is None else start
            shell = shell or context == SHELL_KEY
            if typed is not None:
                parts.append(typed)
            if context is None:  # the typed text ends the turn's blocks
                ran = {COMMANDS} if shell else set()
                turns.append({"message": index, "block": start, "parts": parts, "ran": ran})
                start, parts, shell = None, [], False
    return [
        UserTurn(
            number,
            turn["message"],
            turn["block"],
            " · ".join(turn["parts"]),
            turn["parts"][-1],
            tuple(kind for kind in (COMMANDS, MCP_TOOLS) if kind in turn["ran"]),
        )
        for number, turn in enumerate(turns)
    ]


def conversation_before(messages: list[Message], turn: UserTurn) -> list[Message]:
    """The conversation as it was just before `turn` was sent (a copy of its outer lists)."""
    kept = [{**message, "content": list(message["content"])} for message in messages[: turn.message]]
    earlier = messages[turn.message]["content"][: turn.block]
    if earlier:  # tool results answering the reply before the turn stay with it
        kept.append({"role": "user", "content": list(earlier)})
    return kept


def _context_kind(block: Any) -> str | None:
    if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
        return None
    return added_context(block["text"])[0]


def _untracked_kind(block: Any) -> str | None:
    """COMMANDS or MCP_TOOLS for a call whose changes no checkpoint keeps; None for any other block."""
    if (
        not isinstance(block, dict)
        or block.get("type") != "tool_use"
        or not isinstance(block.get("name"), str)
    ):
        return None
    if block["name"] == SHELL_TOOL:
        return COMMANDS
    return MCP_TOOLS if block["name"].startswith(MCP_PREFIX) else None
