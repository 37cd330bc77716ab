"""How full the context window is, in words: the line after each reply, the compaction
announcement, and `/context`'s breakdown. Plain text, the same in every front end."""

from __future__ import annotations

from mini_claude.agent.context_report import ContextBreakdown
from mini_claude.agent.request_view import BYTES_PER_TOKEN, CLEAR_AT, COMPACT_AT
from mini_claude.core.events import ContextCompacted, ContextStatus

NAME_COLUMN = 18
NUMBER_COLUMN = 9
SHARE_COLUMN = 7


def short_tokens(tokens: int) -> str:
    """46k, 1.2k, 950: a count at a glance."""
    if tokens >= 10_000:
        return f"{tokens / 1000:,.0f}k"
    if tokens >= 1_000:
        return f"{tokens / 1000:.1f}k"
    return str(tokens)


def percent(tokens: int, window: int) -> str:
    return f"{100 * tokens / window:.0f}%"


def context_indicator(status: ContextStatus) -> str:
    """After each reply: `context: 23% of 200k tokens`, with a hint once old output is cleared."""
    line = f"context: {percent(status.used_tokens, status.window)} of {short_tokens(status.window)} tokens"
    if status.used_tokens > CLEAR_AT * status.window:
        line += f" · compacts at {COMPACT_AT:.0%} (/compact to do it now)"
    return line


CONTEXT_LINE_STEP = 0.10  # the line after a reply comes back once usage moved this share of the window
CONTEXT_THRESHOLDS = (CLEAR_AT, 0.7, COMPACT_AT)  # and whenever usage passes one of these


class ContextLineGate:
    """Whether the context line is worth printing after this reply: a line after every reply of
    a short conversation says nothing new. It is printed when usage moved by CONTEXT_LINE_STEP
    of the window since the last one printed (from zero: the first comes at 10%), or passed a
    threshold (where old output starts being cleared, where compaction nears)."""

    def __init__(self) -> None:
        self._shown_tokens = 0  # what the last line printed (or a compaction's announcement) said

    def wanted(self, status: ContextStatus) -> bool:
        before, now = self._shown_tokens / status.window, status.used_tokens / status.window
        low, high = min(before, now), max(before, now)
        if abs(now - before) >= CONTEXT_LINE_STEP or any(low < mark <= high for mark in CONTEXT_THRESHOLDS):
            self._shown_tokens = status.used_tokens
            return True
        return False

    def compacted(self, event: ContextCompacted) -> None:
        """The announcement said the new size: the next line compares with that."""
        self._shown_tokens = event.after_tokens

    def reset(self) -> None:
        """A new conversation (or another one resumed)."""
        self._shown_tokens = 0


COMPACTION_CAUSES = {
    "manual": "Compacted the conversation",
    "auto": "The context window was nearly full: compacted the conversation",
    "too_long": "The server found the request too long: compacted the conversation",
}


def compaction_announcement(event: ContextCompacted) -> str:
    """`Compacted the conversation: ~152k → ~14k tokens; a summary now stands for its first 40 messages.`"""
    messages = "message" if event.replaced == 1 else "messages"
    return (
        f"{COMPACTION_CAUSES[event.trigger]}: ~{short_tokens(event.before_tokens)} → "
        f"~{short_tokens(event.after_tokens)} tokens; a summary now stands for its first "
        f"{event.replaced} {messages}."
    )


def breakdown_lines(report: ContextBreakdown) -> list[str]:
    window = report.window
    lines = [f"Context: {report.total:,} of {window:,} tokens ({percent(report.total, window)})"]
    notes = {"summary": "", "tool results": ""}
    if report.summarised:
        noun = "message" if report.summarised == 1 else "messages"
        notes["summary"] = f"stands for the first {report.summarised} {noun}"
    if report.cleared:
        notes["tool results"] = f"{report.cleared} earlier outputs cleared"
    rows = [*report.parts, ("free", max(0, window - report.total))]
    for name, tokens in rows:
        note = notes.get(name, "")
        row = (
            f"  {name:<{NAME_COLUMN}}{tokens:>{NUMBER_COLUMN},}"
            f"{percent(tokens, window):>{SHARE_COLUMN}}" + (f"   ({note})" if note else "")
        )
        lines.append(row)
    if report.counted:
        lines.append(
            "The total is the server's count of the last request plus what was added since; the parts are "
            f"estimated from their size (about {BYTES_PER_TOKEN} bytes a token) and scaled to that total."
        )
    else:
        lines.append(
            f"Nothing was counted by the server yet: every figure is estimated from its size "
            f"(about {BYTES_PER_TOKEN} bytes a token)."
        )
    lines.append(
        f"Old tool output is cleared from requests past {report.clear_at:,} tokens ({CLEAR_AT:.0%}); "
        f"past {report.compact_at:,} ({COMPACT_AT:.0%}) the conversation is summarised. "
        "/compact summarises it now."
    )
    return lines
