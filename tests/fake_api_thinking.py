"""Thinking in the fake API: the blocks it sends (signed, as the real API signs them) and what the
real API refuses of them when they come back.

A `thinking` block's signature covers its text; a `redacted_thinking` block's `data` carries its
own. A block altered on the way back fails its check. The blocks the fake sent with tool calls are
remembered by tool_use id: the request that answers those calls must hold them, unchanged and in
order, in the assistant message that made the calls (the API's rule for thinking with tool use),
so a client that drops or edits them gets the real API's 400. And, as newer models check
("preserved thinking"), each block's prefix (system, tools and the messages before it) must be
the one it was written after: a request that changed it is refused.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

SIGNING_KEY = b"fake-anthropic-thinking"
THINKING_TYPES = ("thinking", "redacted_thinking")
REQUEST_TYPES = ("enabled", "adaptive", "disabled")
DISPLAYS = ("summarized", "omitted")
MIN_BUDGET = 1024
# Issued thinking, by the id of a tool call sent with it.
Issued = Mapping[str, list[dict[str, Any]]]
# The prefix each block was written after (its digest), by the block's signature or data.
Prefixes = Mapping[str, str]


class ThinkingInvalid(Exception):
    pass


def _sign(text: str) -> str:
    return base64.b64encode(hashlib.sha256(SIGNING_KEY + text.encode()).digest()).decode()


def thinking_block(text: str) -> dict[str, Any]:
    """A thinking block as the API returns it: its text and a signature over it."""
    return {"type": "thinking", "thinking": text, "signature": _sign(text)}


def redacted_thinking_block(secret: str = "encrypted reasoning") -> dict[str, Any]:
    payload = base64.b64encode(secret.encode()).decode()
    return {"type": "redacted_thinking", "data": f"{payload}.{_sign(payload)}"}


def issued_with_calls(blocks: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The thinking of a reply, by the id of each tool call it makes."""
    thinking = [dict(block) for block in blocks if block["type"] in THINKING_TYPES]
    return {block["id"]: thinking for block in blocks if block["type"] == "tool_use"} if thinking else {}


def block_key(block: dict[str, Any]) -> str:
    return str(block.get("signature") if block["type"] == "thinking" else block.get("data"))


def prefix_digest(body: dict[str, Any], messages: int) -> str:
    """What a block after `body`'s first `messages` messages was written after; cache marks apart."""
    prefix = [body.get("system"), body.get("tools"), body.get("messages", [])[:messages]]
    return hashlib.sha256(json.dumps(_unmarked(prefix), sort_keys=True).encode()).hexdigest()


def _unmarked(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _unmarked(item) for key, item in value.items() if key != "cache_control"}
    return [_unmarked(item) for item in value] if isinstance(value, list) else value


def written_after(body: dict[str, Any], blocks: list[dict[str, Any]]) -> dict[str, str]:
    """The prefix of each thinking block of a reply to `body`."""
    digest = prefix_digest(body, len(body.get("messages") or []))
    return {block_key(block): digest for block in blocks if block["type"] in THINKING_TYPES}


def check_block(block: dict[str, Any], where: str) -> None:
    """A thinking or redacted_thinking block that comes back: as the API signed it."""
    if block["type"] == "thinking":
        text, signature = block.get("thinking"), block.get("signature")
        _require(
            isinstance(text, str) and isinstance(signature, str), f"{where}: thinking and signature required"
        )
        _require(signature == _sign(text), f"{where}: Invalid `signature` in `thinking` block")
    else:
        data = block.get("data")
        payload, _, signature = data.rpartition(".") if isinstance(data, str) else ("", "", "")
        _require(
            payload and signature == _sign(payload), f"{where}: Invalid `data` in `redacted_thinking` block"
        )


def check_request(
    body: dict[str, Any], issued: Issued, accepted_types: tuple[str, ...], prefixes: Prefixes
) -> None:
    """The `thinking` field, the prefixes of the thinking sent back, and the thinking that must
    come back with tool results."""
    thinking = body.get("thinking")
    if thinking is not None:
        _check_field(thinking, body.get("max_tokens"), accepted_types)
    messages = body.get("messages") or []
    for index, message in enumerate(messages):
        blocks = message.get("content") if isinstance(message, dict) else None
        for block in blocks if isinstance(blocks, list) else []:
            written = prefixes.get(block_key(block)) if block.get("type") in THINKING_TYPES else None
            _require(
                written is None or written == prefix_digest(body, index),
                f"messages.{index}: a thinking block's prefix (system, tools and the messages before it) "
                "changed since it was written",
            )
    if len(messages) < 2 or not isinstance(messages[-1].get("content"), list):
        return
    results = [b for b in messages[-1]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    calling, where = messages[-2], f"messages.{len(messages) - 2}"
    if not results or not isinstance(calling.get("content"), list):
        return
    sent = [b for b in calling["content"] if isinstance(b, dict) and b.get("type") in THINKING_TYPES]
    for block in calling["content"]:
        expected = issued.get(block.get("id", "")) if block.get("type") == "tool_use" else None
        _require(
            expected is None or sent == expected,
            f"{where}: the thinking blocks of an assistant turn must be passed back unchanged with its "
            f"tool results (sent with the tool calls: {len(expected or [])}, passed back: {len(sent)})",
        )
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        first = calling["content"][0].get("type") if calling["content"] else None
        _require(
            first in THINKING_TYPES,
            f"{where}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. When "
            "`thinking` is enabled, a final `assistant` message must start with a thinking block.",
        )


def _check_field(thinking: Any, max_tokens: Any, accepted_types: tuple[str, ...]) -> None:
    _require(isinstance(thinking, dict), "thinking: Input should be an object")
    kind = thinking.get("type")
    _require(kind in REQUEST_TYPES, f"thinking.type: Input should be one of {', '.join(REQUEST_TYPES)}")
    _require(
        kind in accepted_types,
        f'"thinking.type.{kind}" is not supported for this model. Use "thinking.type.adaptive" and '
        '"output_config.effort" to control thinking behavior.',
    )
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        _require(
            type(budget) is int and budget >= MIN_BUDGET, f"thinking.budget_tokens: must be >= {MIN_BUDGET}"
        )
        _require(
            type(max_tokens) is int and budget < max_tokens,
            "`max_tokens` must be greater than `thinking.budget_tokens`",
        )
    _require(
        thinking.get("display", "summarized") in DISPLAYS,
        "thinking.display: Input should be summarized or omitted",
    )


def _require(condition: object, message: str) -> None:
    if not condition:
        raise ThinkingInvalid(message)
