"""The whole conversation as entries to read: what the user typed (and attached, and ran), each
reply, thinking when there is some, every tool call with its input and its output as the model
read it. The transcript view (Ctrl+O) shows them, `/export` writes them as markdown. Texts are the
conversation's own: the caller makes them visible (view) or fences them (markdown)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from mini_claude.core import prompts
from mini_claude.sessions.typed_input import REMINDER_START, SHELL_KEY, added_context, typed_text

MAX_BLOCK_LINES = 400  # of one tool output or attachment; the rest is counted
_ATTACHED_PATH = re.compile(r'path="([^"]*)"')

REDACTED_THINKING = "(encrypted by the API's safety systems)"
Kind = Literal["user", "reply", "thinking", "call", "output", "note"]
Message = dict[str, Any]


@dataclass(frozen=True)
class Entry:
    kind: Kind
    text: str  # for a call: its input as indented JSON
    title: str = ""  # for a call: `name(main argument)`; for an output or note: what it is
    is_error: bool = False


def conversation_entries(
    messages: list[Message], summarize_call: Callable[[str, object], str]
) -> list[Entry]:
    entries: list[Entry] = []
    names: dict[str, str] = {}
    for message in messages:
        for block in message.get("content", []):
            if not isinstance(block, dict):
                continue
            if message.get("role") == "assistant":
                entries += _assistant_entries(block, summarize_call, names)
            else:
                entries += _user_entries(block, names)
    return entries


def _assistant_entries(
    block: dict[str, Any], summarize_call: Callable[[str, object], str], names: dict[str, str]
) -> list[Entry]:
    kind = block.get("type")
    if kind == "text" and str(block.get("text", "")).strip():
        return [Entry("reply", str(block["text"]))]
    if kind == "thinking" and str(block.get("thinking", "")).strip():
        return [Entry("thinking", str(block["thinking"]))]
    if kind == "redacted_thinking":  # sent back to the model as it came; nobody can read it
        return [Entry("thinking", REDACTED_THINKING)]
    if kind == "tool_use":
        name = str(block.get("name", ""))
        names[str(block.get("id", ""))] = name
        argument = summarize_call(name, block.get("input"))
        shown = json.dumps(block.get("input"), indent=2, ensure_ascii=False)
        return [Entry("call", shown, f"{name}({argument})" if argument else name)]
    return []


def _user_entries(block: dict[str, Any], names: dict[str, str]) -> list[Entry]:
    kind = block.get("type")
    if kind == "tool_result":
        name = names.get(str(block.get("tool_use_id", "")), "tool")
        error = block.get("is_error") is True
        title = f"{name}: {'error' if error else 'output'}"
        return [Entry("output", capped(result_text(block.get("content"))), title, error)]
    if kind != "text" or not isinstance(block.get("text"), str):
        return []
    text: str = block["text"]
    context, rest = added_context(text)
    if context == SHELL_KEY:
        command = typed_text(block) or "!command"
        return [Entry("user", command), Entry("output", capped(_inside_tags(text, rest)), "its output")]
    if context is not None:
        found = _ATTACHED_PATH.search(text)
        what = f"attached @{found.group(1)}" if found else "attached"
        return [Entry("note", capped(_inside_tags(text, rest)), what)]
    if text.startswith(REMINDER_START):
        return [Entry("note", text, "memories recalled for the model")]
    if text in (prompts.notice("user_interrupted"), prompts.notice("transcript_gap")):
        return [Entry("note", "", "interrupted" if "interrupted" in text else "part of it could not be read")]
    typed = typed_text(block)
    if typed is None:
        return [Entry("note", text, "added for the model")]  # a compaction's summary, say
    return [Entry("user", typed)]


def capped(text: str, max_lines: int = MAX_BLOCK_LINES) -> str:
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return text
    return "\n".join([*lines[:max_lines], f"… {len(lines) - max_lines:,} more lines"])


def _inside_tags(text: str, rest: str) -> str:
    """The content `untrusted.wrap` put between tags in `text`; `rest` follows the opening tag's
    name (or its `>`), where `added_context` stopped. Attribute values hold no raw `>`."""
    opened = text.find(">", len(text) - len(rest) - 1)
    body = text[opened + 1 :] if opened >= 0 else rest
    return re.sub(r"\n?</[\w-]+>\s*$", "", body.removeprefix("\n"))


def result_text(content: object) -> str:
    """A tool result's text; a part that is no text (an MCP tool's picture) named by its type."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part for part in content if isinstance(part, dict)]
        return "\n".join(
            str(p.get("text", "")) if p.get("type") == "text" else f"[{p.get('type')}]" for p in parts
        )
    return ""
