"""What the next request would hold, part by part, for `/context`.

The server counts a request's tokens as one number; the parts are estimated from their size (at
BYTES_PER_TOKEN) and, once a call was counted, scaled so they add up to that count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mini_claude.agent.request_view import (
    BYTES_PER_TOKEN,
    CLEAR_AT,
    COMPACT_AT,
    RequestParts,
    RequestView,
    size_of,
    summary_block,
)
from mini_claude.memory.store.index import INDEX_TAG

PART_NAMES = ("system prompt", "memory index", "tool definitions", "summary", "conversation", "tool results")


@dataclass(frozen=True)
class ContextBreakdown:
    window: int
    total: int  # tokens of the next request (before the new message)
    counted: bool  # the total starts from the server's count of the last call
    parts: tuple[tuple[str, int], ...]  # (name, tokens), in PART_NAMES order
    cleared: int  # tool results the request holds shortened
    summarised: int  # stored messages a summary stands for (0: none)
    clear_at: int  # tokens past which old tool output is cleared
    compact_at: int  # tokens past which the conversation is summarised


def context_breakdown(view: RequestView, parts: RequestParts) -> ContextBreakdown:
    system_text = "".join(block.get("text", "") for block in parts.system)
    index = _tagged_span(system_text, INDEX_TAG)
    messages = view.view(parts.messages)
    results = sum(
        size_of(block)
        for message in messages
        for block in message["content"]
        if block.get("type") == "tool_result"
    )
    summary = size_of(summary_block(view.compaction.summary)) if view.compaction else 0
    sizes = {
        "system prompt": size_of(parts.system) - index,
        "memory index": index,
        "tool definitions": size_of(parts.tools),
        "summary": summary,
        "conversation": size_of(messages) - results - summary,
        "tool results": results,
    }
    total = view.estimate(parts)
    all_bytes = sum(sizes.values()) or 1
    scale = total * BYTES_PER_TOKEN / all_bytes if view.last_call else 1.0
    tokens = tuple((name, round(sizes[name] * scale / BYTES_PER_TOKEN)) for name in PART_NAMES)
    window = view.window
    summarised = view.start(parts.messages) if view.compaction else 0
    return ContextBreakdown(
        window, total, view.last_call is not None, tokens, view.cleared_count(parts.messages),
        summarised, int(CLEAR_AT * window), int(COMPACT_AT * window),
    )  # fmt: skip


def _tagged_span(text: str, tag: str) -> int:
    """The length of every `<tag …>…</tag>` in `text` (the memory index has one per scope); the
    wrapped text cannot hold the tag."""
    return sum(len(found.group()) for found in re.finditer(f"<{tag}[ >].*?</{tag}>", text, re.DOTALL))
