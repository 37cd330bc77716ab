"""What a transcript record's content may hold: the content blocks the Messages API accepts back in
a conversation, each with the fields and types it needs. A record whose content is not that is
skipped on load (a damaged or hand-edited line): kept, it would make every later request a 400.

Only the fields the API takes are kept from a valid block, so a stray field (or a cache mark that
would exceed the API's four) cannot spoil the requests either. Whether the conversation as a
whole is valid (pairs, unique ids, no empty text) is repair.py's part.
"""

from __future__ import annotations

import re
from typing import Any

Block = dict[str, Any]
# The characters the API accepts in a tool_use id (llm/tool_calls.py makes the server's ids so).
TOOL_ID = re.compile(r"[A-Za-z0-9_-]+")
# Which role each block type may appear in.
BLOCK_ROLES = {
    "text": ("user", "assistant"),
    "tool_use": ("assistant",),
    "tool_result": ("user",),
    "thinking": ("assistant",),  # kept exactly: the API checks its signature when it goes back
    "redacted_thinking": ("assistant",),
}


class ContentProblem(ValueError):
    """Why content is not what the API accepts, in a few words for a `file: line N:` warning."""


def checked_content(content: Any, role: str) -> list[Block]:
    """`content` (a record's list of blocks, for a message of `role`) with only the fields the API
    accepts; raises ContentProblem when it is not a non-empty list of valid blocks."""
    if not isinstance(content, list) or not content:
        raise ContentProblem("no list of content blocks")
    return [_checked_block(block, role, index) for index, block in enumerate(content)]


def checked_summary(content: Any) -> list[Block]:
    """A compaction summary: a non-empty list of text blocks. Raises ContentProblem."""
    blocks = checked_content(content, "user")
    if any(block["type"] != "text" for block in blocks):
        raise ContentProblem("a summary that is not text")
    return blocks


def _checked_block(block: Any, role: str, index: int) -> Block:
    where = f"block {index + 1}"
    if not isinstance(block, dict):
        raise ContentProblem(f"{where} is not an object")
    kind = block.get("type")
    if kind not in BLOCK_ROLES:
        shown = f"type {kind!r}"[:40] if isinstance(kind, str) else "no type"
        raise ContentProblem(f"{where} has {shown} (known: {', '.join(BLOCK_ROLES)})")
    if role not in BLOCK_ROLES[kind]:
        raise ContentProblem(f"{where} is a {kind} block in a message of the {role}")
    where = f"{where}, a {kind} block,"
    if kind == "text":
        return {"type": "text", "text": _string(block, "text", where)}
    if kind == "thinking":
        return {"type": "thinking", "thinking": _string(block, "thinking", where),
                "signature": _string(block, "signature", where, empty=False)}  # fmt: skip
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": _string(block, "data", where, empty=False)}
    if kind == "tool_use":
        tool_id, name = _tool_id(block, "id", where), _string(block, "name", where, empty=False)
        if not isinstance(block.get("input"), dict):
            raise ContentProblem(f"{where} has an input that is not an object")
        return {"type": "tool_use", "id": tool_id, "name": name, "input": block["input"]}
    result: Block = {"type": "tool_result", "tool_use_id": _tool_id(block, "tool_use_id", where)}
    result["content"] = _result_content(block.get("content", ""), where)
    is_error = block.get("is_error", False)
    if not isinstance(is_error, bool):
        raise ContentProblem(f"{where} has an is_error that is not true or false")
    if is_error:
        result["is_error"] = True
    return result


def _string(block: Block, key: str, where: str, *, empty: bool = True) -> str:
    value = block.get(key)
    if not isinstance(value, str) or (not empty and not value):
        raise ContentProblem(f"{where} has no {key} string")
    return value


def _tool_id(block: Block, key: str, where: str) -> str:
    value = block.get(key)
    if not isinstance(value, str) or not TOOL_ID.fullmatch(value):
        raise ContentProblem(f"{where} has no valid {key}")
    return value


def _result_content(content: Any, where: str) -> str | list[Block]:
    """A tool result's content: text, or a list of text blocks and base64 images (an MCP
    tool's picture)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(_result_part(part) is not None for part in content):
        return [part for part in map(_result_part, content) if part is not None]
    raise ContentProblem(f"{where} has content that is not text or images")


def _result_part(part: Any) -> Block | None:
    if not isinstance(part, dict):
        return None
    if part.get("type") == "text" and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    source = part.get("source")
    if (
        part.get("type") == "image"
        and isinstance(source, dict)
        and source.get("type") == "base64"
        and isinstance(source.get("media_type"), str)
        and isinstance(source.get("data"), str)
    ):
        image = {"type": "base64", "media_type": source["media_type"], "data": source["data"]}
        return {"type": "image", "source": image}
    return None
