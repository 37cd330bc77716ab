"""What the real Messages API rejects: the fake server answers these requests with a 400."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

from tests.fake_api_thinking import (
    REQUEST_TYPES,
    THINKING_TYPES,
    Issued,
    Prefixes,
    ThinkingInvalid,
    check_block,
    check_request,
)

TOOL_NAME_PATTERN = r"[a-zA-Z0-9_-]{1,64}"
TOOL_ID_PATTERN = r"[a-zA-Z0-9_-]+"
OTHER_BLOCK_TYPES = ("image", "document")  # accepted, not inspected
MAX_CACHE_BREAKPOINTS = 4  # the real API rejects a request with more cache_control markers


class _Invalid(Exception):
    pass


def _require(condition: object, message: str) -> None:
    if not condition:
        raise _Invalid(message)


def validate_request(
    body: Any,
    issued: Issued | None = None,
    thinking_types: tuple[str, ...] = REQUEST_TYPES,
    prefixes: Prefixes | None = None,
) -> str | None:
    """Why the real API would answer this Messages request body with a 400, or None if it is fine.
    `issued`: the thinking the server sent with tool calls, `prefixes` what each thinking block was
    written after (fake_api_thinking.py); `thinking_types`: the `thinking.type` values the model takes."""
    try:
        _check_request(body)
        check_request(body, issued or {}, thinking_types, prefixes or {})
    except (_Invalid, ThinkingInvalid) as err:
        return str(err)
    return None


def _check_request(body: Any) -> None:
    _require(isinstance(body, dict), "request body must be a JSON object")
    _require(_is_utf8(body), "request body is not valid UTF-8 (a lone surrogate in a string)")
    _require(_is_text(body.get("model")), "model: Field required")
    max_tokens = body.get("max_tokens")
    _require(type(max_tokens) is int and max_tokens >= 1, "max_tokens: must be an integer >= 1")
    _require(isinstance(body.get("stream", False), bool), "stream: Input should be a valid boolean")
    system = body.get("system")
    if system is not None and not isinstance(system, str):
        _require(isinstance(system, list), "system: Input should be a valid string or list of text blocks")
        for i, block in enumerate(system):
            _check_text_block(block, f"system.{i}")
    _check_tools(body.get("tools"))
    _check_messages(body.get("messages"))
    breakpoints = sum(1 for part in _cacheable_parts(body) if "cache_control" in part)
    _require(
        breakpoints <= MAX_CACHE_BREAKPOINTS,
        f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
        f"Found {breakpoints}.",
    )


def _is_utf8(body: Any) -> bool:
    """A body holding a lone surrogate (a JSON `\\ud800`): the SDK cannot even encode it."""
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_text_block(block: Any, where: str) -> None:
    _require(isinstance(block, dict) and block.get("type") == "text", f"{where}: expected a text block")
    text = block.get("text")
    _require(isinstance(text, str) and text.strip(), f"{where}: text blocks must contain non-whitespace text")
    cache_control = block.get("cache_control", {"type": "ephemeral"})
    _require(_is_dict(cache_control, type="ephemeral"), f"{where}.cache_control: type should be 'ephemeral'")


def _check_image_block(block: dict[str, Any], where: str) -> None:
    """An image as the API takes one in a tool result: base64 data of a type it reads."""
    source = block.get("source")
    _require(_is_dict(source, type="base64"), f"{where}.source: expected a base64 source")
    _require(
        source.get("media_type") in ("image/jpeg", "image/png", "image/gif", "image/webp"),
        f"{where}.source.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
    )
    _require(_is_text(source.get("data")), f"{where}.source.data: Field required")


def _is_dict(value: Any, **expected: Any) -> bool:
    return isinstance(value, dict) and all(value.get(key) == want for key, want in expected.items())


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    _require(isinstance(tools, list), "tools: Input should be a valid list")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        _require(isinstance(tool, dict), f"tools.{i}: Input should be an object")
        name = tool.get("name")
        _require(_is_text(name) and re.fullmatch(TOOL_NAME_PATTERN, name), f"tools.{i}.name: bad tool name")
        _require(name not in names, f"tools: Tool names must be unique, {name!r} is repeated")
        names.add(name)
        _require(_is_text(tool.get("description")), f"tools.{i}.description: Field required")
        _require(
            _is_dict(tool.get("input_schema"), type="object"),
            f"tools.{i}.input_schema: type must be 'object'",
        )


def _check_messages(messages: Any) -> None:
    _require(isinstance(messages, list) and messages, "messages: at least one message is required")
    seen_tool_ids: set[str] = set()
    open_tool_ids: list[str] = []  # tool_use ids of the previous assistant message, awaiting results
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        _require(isinstance(message, dict), f"{where}: Input should be an object")
        role = message.get("role")
        _require(role in ("user", "assistant"), f"{where}.role: Input should be 'user' or 'assistant'")
        expected = "user" if i % 2 == 0 else "assistant"
        _require(
            role == expected, f"messages: roles must alternate user/assistant from user; {where} is {role}"
        )
        blocks = _content_blocks(message.get("content"), role, where)
        if role == "user":
            _check_tool_results(blocks, open_tool_ids, where, i)
            open_tool_ids = []
        else:
            open_tool_ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
            for tool_id in open_tool_ids:
                _require(tool_id not in seen_tool_ids, f"{where}: `tool_use` ids must be unique: {tool_id}")
                seen_tool_ids.add(tool_id)
    _check_tool_results([], open_tool_ids, "", len(messages))  # a final tool_use still needs its result


def _content_blocks(content: Any, role: str, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        _require(content.strip(), f"{where}: messages must have non-empty content")
        return [{"type": "text", "text": content}]
    _require(isinstance(content, list) and content, f"{where}: messages must have non-empty content")
    for j, block in enumerate(content):
        at = f"{where}.content.{j}"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            _check_text_block(block, at)
        elif kind == "tool_use":
            _require(role == "assistant", f"{at}: tool_use blocks are only allowed in assistant messages")
            _require(
                _is_text(block.get("id")) and _is_text(block.get("name")), f"{at}: id and name are required"
            )
            _require(
                re.fullmatch(TOOL_ID_PATTERN, block["id"]),
                f"{at}.tool_use.id: String should match pattern '^{TOOL_ID_PATTERN}$'",
            )
            _require(isinstance(block.get("input"), dict), f"{at}.input: Input should be an object")
        elif kind == "tool_result":
            _require(role == "user", f"{at}: tool_result blocks are only allowed in user messages")
            _require(isinstance(block.get("tool_use_id"), str), f"{at}.tool_use_id: Field required")
            result = block.get("content", "")
            if not isinstance(result, str):
                _require(
                    isinstance(result, list),
                    f"{at}.content: should be a string or a list of text or image blocks",
                )
                for k, part in enumerate(result):
                    if isinstance(part, dict) and part.get("type") == "image":
                        _check_image_block(part, f"{at}.content.{k}")
                    else:
                        _check_text_block(part, f"{at}.content.{k}")
        elif kind in THINKING_TYPES:
            _require(role == "assistant", f"{at}: {kind} blocks are only allowed in assistant messages")
            try:
                check_block(block, at)
            except ThinkingInvalid as err:
                raise _Invalid(str(err)) from None
        else:
            _require(kind in OTHER_BLOCK_TYPES, f"{at}: unknown content block type {kind!r}")
    return content


def _check_tool_results(blocks: list[dict], open_tool_ids: list[str], where: str, index: int) -> None:
    result_ids = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    leading = list(itertools.takewhile(lambda b: b["type"] == "tool_result", blocks))
    _require(len(leading) == len(result_ids), f"{where}.content: tool_result blocks must come first")
    for tool_id in result_ids:
        _require(
            tool_id in open_tool_ids,
            f"{where}.content: unexpected `tool_use_id` found in `tool_result` blocks: {tool_id}. "
            "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        )
    _require(
        len(set(result_ids)) == len(result_ids),
        f"{where}.content: duplicate `tool_result` for one `tool_use`",
    )
    missing = [tool_id for tool_id in open_tool_ids if tool_id not in result_ids]
    _require(
        not missing,
        f"messages.{index - 1}: `tool_use` ids were found without `tool_result` blocks immediately after: "
        f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block "
        "in the next message.",
    )


def _cacheable_parts(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if isinstance(body.get("system"), list):
        yield from body["system"]
    yield from body.get("tools") or []
    for message in body["messages"]:
        if isinstance(message["content"], list):
            for block in message["content"]:
                yield block
                if isinstance(block.get("content"), list):
                    yield from block["content"]


# ---------------------------------------------------------------- the server
