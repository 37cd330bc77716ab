"""Keeping a long conversation inside its context window: before each call, old tool output is
cleared from the request and, past COMPACT_AT, the conversation is summarised; the same summary
runs on `/compact` and once after the server refuses a request as too long.

The model writes the summary (prompts/compact.md) from what the requests held; from then on they
hold it instead of the messages it stands for, the latest turns verbatim. Until the summary is in,
nothing changes: a failure or a Ctrl+C leaves the conversation exactly as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from mini_claude.agent.conversation import Message, is_turn_start
from mini_claude.agent.endings import TurnStopped
from mini_claude.agent.request_view import (
    BYTES_PER_TOKEN,
    CLEAR_STEP,
    COMPACT_AT,
    RequestParts,
    RequestView,
    size_of,
    with_cache_mark,
)
from mini_claude.agent.spend_cap import SpendCap
from mini_claude.agent.thinking_prefix import without_thinking
from mini_claude.core import prompts
from mini_claude.core.config import MIN_CONTEXT_WINDOW
from mini_claude.core.events import CompactionStarted, CompactionTrigger, ContextCompacted, Event, Notice
from mini_claude.core.interrupts import sigint_deferred
from mini_claude.core.untrusted import wrap
from mini_claude.llm.client import ModelClient
from mini_claude.llm.model_errors import ModelError
from mini_claude.llm.streamed_response import StreamedResponse
from mini_claude.sessions.loading.loader import Compaction

KEEP_TURNS = 2  # the latest user turns stay verbatim after a compaction…
KEEP_SHARE = 0.25  # …as long as they fit in this share of the window
SUMMARY_MAX_TOKENS = 8_000
SUMMARY_WINDOW_SHARE = 0.125  # …nor more than this share of a small window
SUMMARY_MAX_CHARS_PER_TOKEN = 8  # no real tokenizer packs more into a token of prose
FOCUS_TAG = "compact-focus"
FOCUS_MAX_CHARS = 2_000
# The summary request is made to fit this share of what the window leaves besides the summary.
SUMMARY_FIT_SHARE = 0.95
CANCELLED = "Compaction cancelled; the conversation is unchanged."
NO_SUMMARY = "Compaction failed (the model wrote no summary); the conversation is unchanged."
TOO_BIG_TO_SUMMARISE = (
    "Compaction failed (the latest message alone is larger than the context window, so even a request "
    "to summarise it cannot be sent); /clear starts a new conversation."
)


class CompactionFailed(Exception):
    """The summary could not be made; the message is one line for the user."""


class NothingToCompact(CompactionFailed):
    pass


class TooBigToSummarise(CompactionFailed):
    """Even the request to summarise would not fit the window."""


class ContextKeeper:
    """Owns the RequestView and the summary calls; `emit` tells the agent's sink. A summary call
    that could pass the spend cap is not made (TurnStopped, as for the agent's own calls)."""

    def __init__(
        self,
        llm: ModelClient,
        emit: Callable[[Event], None],
        view: RequestView,
        before: Callable[[str, str | None], None],
        spend: SpendCap,
    ) -> None:
        """`before` hears each compaction about to be made: its trigger and focus (PreCompact)."""
        self.llm = llm
        self.emit = emit
        self.view = view
        self.before = before
        self.spend = spend
        self._auto_failed_at: int | None = None  # tokens when an automatic compaction last failed

    def before_call(self, parts: RequestParts) -> int:
        """Make room for the next call: clear old tool output once due; past COMPACT_AT, summarise
        (a failure is one warning: the call is still tried, and the server has the last word).
        Returns the estimate of the call's tokens."""
        tokens = self.view.estimate(parts)
        freed = self.view.clear_if_due(parts.messages, tokens)
        if freed:
            tokens = self.view.estimate(parts)
            self.emit(Notice(f"Cleared old tool output from the model's view (~{freed:,} tokens).", "info"))
        failed_at = self._auto_failed_at
        if tokens <= COMPACT_AT * self.view.window or (
            failed_at is not None and tokens < failed_at + CLEAR_STEP * self.view.window
        ):
            return tokens
        try:
            return self._compact(parts, "auto", None, tokens).after_tokens
        except CompactionFailed as failure:
            self._auto_failed_at = tokens
            if not isinstance(failure, NothingToCompact | TooBigToSummarise):  # the call will tell
                self.emit(Notice(str(failure), "warning"))
        return tokens

    def after_refusal(self, parts: RequestParts, tokens: int, window: int = 0) -> int:
        """The server refused the request as too long (its count of it: `tokens`; its context
        window, if it said: `window`, which is this session's window from now on when smaller):
        summarise so the call can be made again. Returns the estimate of the next request's
        tokens. Raises CompactionFailed."""
        before = self.view.window
        adopted = self.view.adopt_window(window)
        if adopted:
            self.emit(Notice(
                f"The server's context window is {window:,} tokens, smaller than the {before:,} set "
                f"(MINI_CLAUDE_CONTEXT_WINDOW): this session keeps to {window:,} from now on.", "warning",
            ))  # fmt: skip
        self.view.note_refused(tokens, self.view.request(parts.messages), parts.fixed_bytes)
        try:
            return self._compact(parts, "too_long", None, self.view.estimate(parts)).after_tokens
        except NothingToCompact:
            if not adopted:
                raise
            return self.view.estimate(parts)  # asking for less output in the window may be enough

    def compact(self, parts: RequestParts, focus: str | None) -> ContextCompacted | None:
        """`/compact [focus]`: None when nothing changed (a notice says why)."""
        if focus is not None and len(focus) > FOCUS_MAX_CHARS:
            too_long = f"The focus text is {len(focus):,} characters; keep it under {FOCUS_MAX_CHARS:,}."
            self.emit(Notice(too_long, "error"))
            return None
        try:
            return self._compact(parts, "manual", focus, self.view.estimate(parts))
        except NothingToCompact as nothing:
            self.emit(Notice(str(nothing)))
        except CompactionFailed as failure:
            self.emit(Notice(str(failure), "error"))
        except KeyboardInterrupt:
            self.emit(Notice(CANCELLED, "warning"))
        except TurnStopped as stopped:  # the spend cap
            self.emit(Notice(stopped.ending.notice, "warning"))
        return None

    def _compact(
        self, parts: RequestParts, trigger: CompactionTrigger, focus: str | None, before: int
    ) -> ContextCompacted:
        messages = parts.messages
        start = self.view.start(messages)
        if start >= len(messages):
            summarised = "is already summarised" if self.view.compaction else "is empty"
            raise NothingToCompact(f"Nothing to compact: the conversation {summarised}.")
        cut = self._cut(messages, start)
        # Claude Code's triggers: manual, or auto (too long is automatic)
        self.before("manual" if trigger == "manual" else "auto", focus)
        max_tokens = min(SUMMARY_MAX_TOKENS, parts.max_tokens, int(SUMMARY_WINDOW_SHARE * self.view.window))
        request = self._summary_request(parts, start, cut, focus, max_tokens)
        self.spend.before_call(
            parts.model, self.view.tokens_of(size_of(request), parts.fixed_bytes), max_tokens
        )
        self.emit(CompactionStarted(trigger))
        response = StreamedResponse()
        try:
            for _ in self.llm.stream(
                model=parts.model, system=parts.system, messages=request, tools=parts.tools,
                max_tokens=max_tokens, response=response,
            ):  # fmt: skip
                pass  # the summary is not shown as it streams; the spinner says "Compacting…"
        except ModelError as error:
            raise CompactionFailed(f"Compaction failed ({error}); the conversation is unchanged.") from error
        text = response.text().strip()
        if not text:
            raise CompactionFailed(NO_SUMMARY)
        if len(text) > max_tokens * SUMMARY_MAX_CHARS_PER_TOKEN:  # a server ignoring max_tokens
            raise CompactionFailed(
                f"Compaction failed (the summary is {len(text):,} characters, far more than the "
                f"{max_tokens:,} tokens asked for); the conversation is unchanged."
            )
        compaction = Compaction([{"type": "text", "text": text}], cut, focus)
        trial = copy.copy(self.view)
        trial.compaction = compaction
        after = trial.estimate(parts)
        event = ContextCompacted(before, after, tuple(compaction.summary), cut, focus, trigger)
        with sigint_deferred():  # the state and the event that saves it go together
            self.view.compaction = compaction
            self._auto_failed_at = None
            self.emit(event)
        return event

    def _cut(self, messages: list[Message], start: int) -> int:
        """Where the verbatim part begins: at one of the latest KEEP_TURNS turns that fits in
        KEEP_SHARE of the window; else everything is summarised. Never inside a tool call's pair:
        a turn starts with a user message that answers no call."""
        budget = KEEP_SHARE * self.view.window * BYTES_PER_TOKEN
        turn_starts = [i for i in range(start + 1, len(messages)) if is_turn_start(messages[i])]
        for cut in turn_starts[-KEEP_TURNS:]:
            if size_of(messages[cut:]) <= budget:
                return cut
        return len(messages)

    def _summary_request(
        self, parts: RequestParts, start: int, cut: int, focus: str | None, max_tokens: int
    ) -> list[Message]:
        """What the requests held up to `cut`, then the instruction; when that is too big for the
        window, the old tool output is cleared from it, then its oldest turns are left out."""
        messages = parts.messages
        focus_text = prompts.render("compact_focus.md", focus=wrap(FOCUS_TAG, focus)) if focus else ""
        instruction = {"type": "text", "text": prompts.render("compact.md", focus=focus_text).strip()}
        limit = SUMMARY_FIT_SHARE * (self.view.window - max_tokens)
        extra_bytes = size_of(instruction) + parts.fixed_bytes

        def tokens(view_bytes: int) -> int:
            return self.view.tokens_of(view_bytes + size_of(instruction), parts.fixed_bytes)

        fixed = extra_bytes // BYTES_PER_TOKEN
        if fixed > limit:  # no conversation at all would fit beside them
            origin = "the server's" if self.view.window_from_server else "the MINI_CLAUDE_CONTEXT_WINDOW"
            raise TooBigToSummarise(
                f"Compaction failed: the system prompt (with CLAUDE.md and the memory index) and the tool "
                f"definitions alone take ~{fixed:,} tokens, too many for {origin} context window of "
                f"{self.view.window:,} tokens; a larger window is needed (mini-claude needs at least "
                f"{MIN_CONTEXT_WINDOW:,})."
            )

        view = self.view.view(messages, start=start, end=cut)
        if tokens(size_of(view)) > limit:
            view = self.view.view(messages, start=start, end=cut, clear_before=cut)
        if tokens(size_of(view)) > limit:
            # Sizes per message, so finding how many turns to leave out costs one pass.
            total = size_of(view)
            for turn in (i for i in range(start + 1, cut) if is_turn_start(messages[i])):
                dropped = self.view.view(messages, start=start, end=turn, clear_before=cut)
                total -= size_of(dropped) - (size_of(dropped[0]["content"][0]) if self.view.compaction else 0)
                start = turn
                if tokens(total) <= limit:
                    break
            view = self.view.view(messages, start=start, end=cut, clear_before=cut)
            # Judged by size alone, not by a count the server sent: only a request surely too big
            # (one huge message) is not sent at all.
            if (size_of(view) + extra_bytes) // BYTES_PER_TOKEN > self.view.window:
                raise TooBigToSummarise(TOO_BIG_TO_SUMMARISE)
        # Without thinking: the summary asks for text alone, and no prefix check can fail on it.
        marked = with_cache_mark([without_thinking(message) for message in view])
        last = marked[-1]
        if last["role"] == "user":
            return [*marked[:-1], {**last, "content": [*last["content"], instruction]}]
        return [*marked, {"role": "user", "content": [instruction]}]
