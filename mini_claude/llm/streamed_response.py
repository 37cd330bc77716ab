"""One assistant response assembled from the server's stream events, and the token usage they report.

Apart from llm/client.py because it is the part that must read anything a server sends (odd block types,
repeated ids, NaN counts) without breaking the conversation; it works on the events' parsed JSON.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mini_claude.core.events import Notice, TextDelta, TextDone, ThinkingBlock, ToolPreparing, UsageReport
from mini_claude.core.untrusted import encodable
from mini_claude.llm import model_errors
from mini_claude.llm.model_errors import ModelError
from mini_claude.llm.reading import json_or_none, sse_events, until
from mini_claude.llm.tool_calls import INVALID_TOOL_INPUT, REPEATED_TOOL_ID, claim_tool_id, parse_tool_input

# What the user should see as it arrives (a Notice: the client had to change what it asked for).
StreamUpdate = TextDelta | TextDone | ThinkingBlock | ToolPreparing | Notice
THINKING_TYPES = ("thinking", "redacted_thinking")


@dataclass
class StreamedResponse:
    """One assistant response as it streams in: everything that arrived, even if cut short.

    Its content is always valid to send back: tool inputs are strict JSON objects (no NaN or
    Infinity, which would make every later request unserialisable), tool_use ids are unique in
    the conversation and use only the characters the API accepts, and every string the server
    sent (text, tool names, input keys and values) can be encoded as UTF-8: a lone surrogate
    becomes U+FFFD where it enters, before the user sees it or the transcript keeps it.
    Thinking blocks are kept exactly as sent, signature and all (the API requires them back
    unchanged with tool results); one cut off before its signature arrived is left out.
    """

    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    partial_json: dict[int, list[str]] = field(default_factory=dict)
    started: bool = False  # message_start arrived
    stop_reason: str | None = None
    usage: UsageReport = field(default_factory=UsageReport)
    used_tool_ids: set[str] = field(default_factory=set)  # the conversation's ids so far, then ours
    refused_tool_calls: dict[str, str] = field(default_factory=dict)  # tool_use id → why it must not run

    def content(self) -> list[dict[str, Any]]:
        """The blocks in API form, in order; empty text dropped, unparsed tool input becomes {}."""
        content = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block["type"] == "text" and not block["text"].strip():
                continue
            if block["type"] == "thinking" and not block["signature"]:
                continue  # cut off before it was signed: the API would refuse it
            if block["type"] == "tool_use" and index in self.partial_json:
                self._finish_tool_input(index)
            content.append(block)
        # Thinking alone (a reply cut off before it said or called anything) is no reply to keep.
        return content if any(block["type"] not in THINKING_TYPES for block in content) else []

    def text(self) -> str:
        return "".join(b["text"] for _, b in sorted(self.blocks.items()) if b["type"] == "text")

    def _finish_tool_input(self, index: int) -> None:
        block = self.blocks[index]
        parsed = parse_tool_input("".join(self.partial_json.pop(index, [])))
        if parsed is None:
            block["input"] = {}  # stored as valid JSON, answered as not run
            self.refused_tool_calls[block["id"]] = INVALID_TOOL_INPUT
        else:
            block["input"] = parsed

    def _claim_tool_id(self, raw: object) -> str:
        tool_id, repeated = claim_tool_id(raw, self.used_tool_ids)
        if repeated:  # running it would answer two calls under one id
            self.refused_tool_calls[tool_id] = REPEATED_TOOL_ID
        return tool_id


# The events that move a reply on; a ping, an unknown event or an empty delta does not.
CONTENT_EVENTS = (
    "message_start",
    "content_block_start",
    "content_block_stop",
    "message_delta",
    "message_stop",
)


def carries_content(event: dict[str, Any]) -> bool:
    """Whether the event brings some of the reply: what keeps a stream from timing out."""
    delta = event.get("delta")
    if event.get("type") == "content_block_delta":
        keys = ("text", "partial_json", "thinking", "signature")
        return isinstance(delta, dict) and any(delta.get(key) for key in keys)
    return event.get("type") in CONTENT_EVENTS


def describe_usage(usage: Any) -> UsageReport:
    """Token counts from a usage object (fields may be missing on compatible servers)."""
    usage = usage if isinstance(usage, dict) else {}

    def count(name: str) -> int:
        value = usage.get(name, 0)
        if isinstance(value, float) and math.isfinite(value):
            value = int(value)
        # A server sending NaN, Infinity or text as a count must not break the session.
        return max(0, value) if isinstance(value, int) and not isinstance(value, bool) else 0

    return UsageReport(
        input_tokens=count("input_tokens"),
        output_tokens=count("output_tokens"),
        cache_read_tokens=count("cache_read_input_tokens"),
        cache_write_tokens=count("cache_creation_input_tokens"),
    )


def apply_stream_event(response: StreamedResponse, event: dict[str, Any]) -> Iterator[StreamUpdate]:
    """Record one stream event (its parsed data) in `response`, yielding what it adds for the user
    to see. Data of the wrong shape raises (a KeyError, a TypeError): the stream is broken."""
    kind = event.get("type")
    if kind == "message_start":
        response.started = True
        response.usage = describe_usage(event["message"].get("usage"))
    elif kind == "content_block_start":
        block, index = event["content_block"], event["index"]
        if block["type"] == "text":
            text = encodable(block.get("text") or "")
            response.blocks[index] = {"type": "text", "text": text}
            if text:
                yield TextDelta(text)
        elif block["type"] == "tool_use":
            name = block.get("name")
            response.blocks[index] = {
                "type": "tool_use",
                "id": response._claim_tool_id(block.get("id")),
                "name": encodable(name if isinstance(name, str) else str(name)),
                "input": {},
            }
            response.partial_json[index] = []
            yield ToolPreparing(response.blocks[index]["name"])
        elif block["type"] == "thinking":
            response.blocks[index] = {
                "type": "thinking",
                "thinking": encodable(_text(block.get("thinking"))),
                "signature": _text(block.get("signature")),
            }
        elif block["type"] == "redacted_thinking" and isinstance(block.get("data"), str):
            response.blocks[index] = {"type": "redacted_thinking", "data": block["data"]}
        # Other block types (server tools) are not requested by us and not kept.
    elif kind == "content_block_delta":
        index, delta = event["index"], event["delta"]
        block = response.blocks.get(index)
        if block is None:
            return
        if delta["type"] == "text_delta" and block["type"] == "text":
            text = encodable(delta["text"])  # each half of a pair split across two events: U+FFFD
            block["text"] += text
            yield TextDelta(text)
        elif delta["type"] == "input_json_delta" and index in response.partial_json:
            response.partial_json[index].append(delta["partial_json"])
        elif delta["type"] == "thinking_delta" and block["type"] == "thinking":
            block["thinking"] += encodable(_text(delta["thinking"]))
        elif delta["type"] == "signature_delta" and block["type"] == "thinking":
            block["signature"] += _text(delta["signature"])
    elif kind == "content_block_stop":
        block = response.blocks.get(event["index"])
        if block is not None and block["type"] == "text":
            yield TextDone()
        elif block is not None and block["type"] in THINKING_TYPES:
            yield ThinkingBlock(block.get("thinking", ""), redacted=block["type"] == "redacted_thinking")
        elif block is not None and block["type"] == "tool_use":
            response._finish_tool_input(event["index"])
    elif kind == "message_delta":
        stop_reason = event["delta"].get("stop_reason")
        response.stop_reason = None if stop_reason is None else encodable(str(stop_reason))
        final = describe_usage(event.get("usage"))
        response.usage = UsageReport(
            input_tokens=final.input_tokens or response.usage.input_tokens,
            output_tokens=final.output_tokens or response.usage.output_tokens,
            cache_read_tokens=final.cache_read_tokens or response.usage.cache_read_tokens,
            cache_write_tokens=final.cache_write_tokens or response.usage.cache_write_tokens,
        )
    # message_stop and unknown event types carry nothing we need.


def _text(value: object) -> str:
    """A string field a server may have left out or sent as null."""
    return value if isinstance(value, str) else ""


def read_stream(
    chunks: Iterable[bytes], response: StreamedResponse, silence_limit: float
) -> Iterator[StreamUpdate]:
    """A stream body's events, as its `chunks` arrive, applied to `response`; ModelError for an
    `error` event; OutOfTime once no content came for `silence_limit` seconds (a ping, an unknown
    event or an empty delta is none)."""
    content_at = [time.monotonic()]  # moved on by each piece of content, read by the deadline
    for name, data in sse_events(until(chunks, lambda: content_at[0] + silence_limit)):
        if name == "ping":
            continue
        event = json_or_none(data) if name == "error" else json.loads(data)
        if name == "error" or (isinstance(event, dict) and event.get("type") == "error"):
            raise ModelError(model_errors.reported_mid_response(event, data))
        if isinstance(event, dict):
            if carries_content(event):
                content_at[0] = time.monotonic()
            yield from apply_stream_event(response, event)
