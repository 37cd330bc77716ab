"""What the next request holds, decided from the stored conversation (which stays whole, like the
transcript): the summary in place of the messages it stands for, tool output older than the last
few steps shortened once the window is half full, a cache mark on the last block.

Sizes: the server counts every request's tokens (its usage); what changed since the last call is
estimated at BYTES_PER_TOKEN, so deciding before a call costs no extra round trip.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mini_claude.agent.conversation import Message, has_tool_results
from mini_claude.agent.thinking_prefix import ThinkingPrefixes
from mini_claude.core import prompts
from mini_claude.core.events import ContextStatus, UsageReport
from mini_claude.core.untrusted import wrap
from mini_claude.sessions.loading.loader import Compaction

Block = dict[str, Any]
CACHE_MARK = {"type": "ephemeral"}
BYTES_PER_TOKEN = 4  # code and English average about 4 bytes a token (sizes are of the JSON sent)
CLEAR_AT = 0.5  # share of the window: above it, old tool output is shortened in requests
COMPACT_AT = 0.8  # above it, the conversation is summarised before the next call
KEEP_TOOL_RESULTS = 3  # the tool results of the latest this-many steps always stay whole
CLEAR_MIN_CHARS = 300  # a shorter result stays: its placeholder would save next to nothing
# Clearing moves in steps of at least this share of the window, never on every call: each move
# changes the request from the first newly cleared block on, and the prompt cache must store all
# that follows again; a step frees enough to pay for that many times over.
CLEAR_STEP = 0.1
MIN_OUTPUT_TOKENS = 1_024  # a reply is never asked to be shorter, however full the window
OUTPUT_MARGIN = 0.05  # of the window, left beside the estimated prompt and max_tokens
SUMMARY_TAG = "conversation-summary"


@dataclass(frozen=True)
class LastCall:
    tokens: int  # its prompt as the server counted it: input plus cache reads and writes
    output_tokens: int
    sent_bytes: int  # the size of the messages it held (`size_of`)


@dataclass(frozen=True)
class RequestParts:
    """What a request is made of besides the messages, and the stored conversation."""

    model: str
    system: list[Block]
    tools: list[dict[str, Any]]
    max_tokens: int
    messages: list[Message]

    @property
    def fixed_bytes(self) -> int:
        return size_of(self.system) + size_of(self.tools)


def size_of(value: object) -> int:
    return len(json.dumps(value, separators=(",", ":")))  # ASCII-only: its length is its bytes


def result_text(block: Block) -> str:
    content = block.get("content", "")
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def with_cache_mark(messages: list[Message]) -> list[Message]:
    """The messages with a cache mark on their last block (a copy: the mark moves every call)."""
    if not messages:
        return []
    *earlier, last = messages
    content = [*last["content"][:-1], {**last["content"][-1], "cache_control": CACHE_MARK}]
    return [*earlier, {**last, "content": content}]


def summary_block(summary: list[Block]) -> Block:
    text = "\n\n".join(b["text"] for b in summary if isinstance(b.get("text"), str))
    return {"type": "text", "text": prompts.render("compact_summary.md", summary=wrap(SUMMARY_TAG, text))}


class RequestView:
    """The state that decides what requests hold (`compaction`, how far old tool output is cleared,
    the last call's size) and the views built from it."""

    def __init__(self, window: int, describe_call: Callable[[str, object], str]) -> None:
        self.window = window
        self.window_from_server = False  # the server said its window is smaller than the one set
        self.compaction: Compaction | None = None
        self.cleared_before = 0  # tool results in stored messages[:cleared_before] are shortened
        self.last_call: LastCall | None = None
        self.thinking = ThinkingPrefixes()
        self._describe_call = describe_call

    def reset(self) -> None:
        self.compaction, self.cleared_before, self.last_call = None, 0, None
        self.thinking.reset()

    def start(self, messages: list[Message]) -> int:
        """The first stored message requests hold verbatim. A summary set from outside (a resumed
        transcript) may end just before tool results: their calls are kept too, never split."""
        if self.compaction is None:
            return 0
        start = min(max(self.compaction.replaced, 0), len(messages))
        if 0 < start < len(messages) and has_tool_results(messages[start]):
            start -= 1
        return start

    def view(
        self, messages: list[Message], *, start: int | None = None, end: int | None = None,
        clear_before: int | None = None,
    ) -> list[Message]:  # fmt: skip
        """The messages a request holds for the stored `messages[start:end]` (no cache mark)."""
        start = self.start(messages) if start is None else start
        end = len(messages) if end is None else end
        clear_before = self.cleared_before if clear_before is None else clear_before
        kept = [
            self._cleared(messages[i], messages[i - 1])
            if 0 < i < clear_before and has_tool_results(messages[i])
            else messages[i]
            for i in range(start, end)
        ]
        if self.compaction is None:
            return kept
        summary = summary_block(self.compaction.summary)
        if kept and kept[0]["role"] == "user":  # never tool results: see start()
            return [{"role": "user", "content": [summary, *kept[0]["content"]]}, *kept[1:]]
        return [{"role": "user", "content": [summary]}, *kept]

    def request(self, messages: list[Message]) -> list[Message]:
        """The messages of the next request: the view, less stale thinking (thinking_prefix.py)."""
        view, start = self.view(messages), self.start(messages)
        first = start - (len(view) - (len(messages) - start))  # a summary may be a message of its own
        return with_cache_mark(self.thinking.checked(view, first, len(messages)))

    # -- sizes ----------------------------------------------------------------------------------

    def note_usage(self, usage: UsageReport, sent: list[Message]) -> None:
        tokens = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        if tokens:  # a server that reports nothing leaves the estimate to sizes alone
            self.last_call = LastCall(tokens, usage.output_tokens, size_of(sent))

    def note_refused(self, tokens: int, sent: list[Message], fixed_bytes: int) -> None:
        """The server refused `sent` as too long, saying it held `tokens` (0: it did not say, and
        its size is estimated: what the compaction's announcement shows must be real sizes)."""
        counted = tokens or (size_of(sent) + fixed_bytes) // BYTES_PER_TOKEN
        self.last_call = LastCall(counted, 0, size_of(sent))

    def adopt_window(self, window: int) -> bool:
        """The server said its context window is `window` tokens: smaller than the one set (a
        local model's), it is the window from now on. True when it changed."""
        if not 0 < window < self.window:
            return False
        self.window, self.window_from_server = window, True
        return True

    def output_limit(self, max_tokens: int, input_tokens: int) -> int:
        """The max_tokens of a call whose prompt takes about `input_tokens`: no more than the
        window leaves (the Anthropic API and vLLM refuse a request whose prompt and max_tokens
        together exceed it, and the estimate is an estimate), yet at least MIN_OUTPUT_TOKENS (or all
        of `max_tokens`, if fewer)."""
        room = self.window - input_tokens - int(OUTPUT_MARGIN * self.window)
        return max(min(max_tokens, room), min(max_tokens, MIN_OUTPUT_TOKENS))

    def tokens_of(self, view_bytes: int, fixed_bytes: int) -> int:
        """Tokens of a request whose messages take `view_bytes`: the last call's count plus the
        change since, or, before any call was counted, the size of everything."""
        if self.last_call is None:
            return (view_bytes + fixed_bytes) // BYTES_PER_TOKEN
        return max(0, self.last_call.tokens + (view_bytes - self.last_call.sent_bytes) // BYTES_PER_TOKEN)

    def estimate(self, parts: RequestParts) -> int:
        return self.tokens_of(size_of(self.request(parts.messages)), parts.fixed_bytes)

    def status(self) -> ContextStatus | None:
        if self.last_call is None:
            return None
        return ContextStatus(self.last_call.tokens + self.last_call.output_tokens, self.window)

    # -- clearing old tool output ---------------------------------------------------------------

    def clear_if_due(self, messages: list[Message], tokens: int) -> int:
        """Past CLEAR_AT, shorten the tool output older than the latest KEEP_TOOL_RESULTS steps,
        once that frees a CLEAR_STEP; returns the tokens freed (0: the requests stay as they were)."""
        if tokens <= CLEAR_AT * self.window:
            return 0
        boundary = self._recent_results_start(messages)
        first = max(self.cleared_before, self.start(messages), 1)
        freed = (
            sum(
                size_of(messages[i]) - size_of(self._cleared(messages[i], messages[i - 1]))
                for i in range(first, boundary)
                if has_tool_results(messages[i])
            )
            // BYTES_PER_TOKEN
        )
        if freed < CLEAR_STEP * self.window:
            return 0
        self.cleared_before = boundary
        return freed

    def cleared_count(self, messages: list[Message]) -> int:
        """How many tool results the next request holds shortened."""
        return sum(
            1
            for i in range(max(self.start(messages), 1), min(self.cleared_before, len(messages)))
            for block in messages[i]["content"]
            if block.get("type") == "tool_result" and len(result_text(block)) >= CLEAR_MIN_CHARS
        )

    def _recent_results_start(self, messages: list[Message]) -> int:
        with_results = [i for i, message in enumerate(messages) if has_tool_results(message)]
        return with_results[-KEEP_TOOL_RESULTS] if len(with_results) >= KEEP_TOOL_RESULTS else 0

    def _cleared(self, message: Message, calls_message: Message) -> Message:
        calls = {b.get("id"): b for b in calls_message["content"] if b.get("type") == "tool_use"}
        content = []
        for block in message["content"]:
            if block.get("type") == "tool_result" and len(result_text(block)) >= CLEAR_MIN_CHARS:
                block = {**block, "content": self._placeholder(block, calls.get(block.get("tool_use_id")))}
            content.append(block)
        return {**message, "content": content}

    def _placeholder(self, block: Block, call: Block | None) -> str:
        """Computed from the call and its result alone, so it reads the same in every request."""
        name = call.get("name", "a tool") if call else "a tool"
        argument = self._describe_call(name, call.get("input")) if call else ""
        lines = len(result_text(block).splitlines())
        size = f"{lines} line{'s' if lines != 1 else ''}"
        return prompts.notice("tool_output_cleared", call=f"{name} {argument}".strip(), size=size)
