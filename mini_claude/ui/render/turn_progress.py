"""How far the turn has got, for the live status line (`⠋ Thinking… (12s · ↓ 1.2k tokens · esc to
interrupt)`) and the output of the command running now (its last lines under the status line).

Time counts from the turn's first model call; tokens are the turn's output tokens as the server
counted them, plus an estimate of the reply streaming now (BYTES_PER_TOKEN characters a token)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from mini_claude.core.events import (
    Event,
    RequestStarted,
    SubagentProgress,
    TextDelta,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    TurnEnded,
    UsageReport,
)
from mini_claude.ui.render.context_view import short_tokens

CHARS_PER_TOKEN = 4
OUTPUT_LINES_SHOWN = 5  # of a running command's output, its latest
LINE_MAX_CHARS = 500  # of one output line kept (the screen shows less)
INTERRUPT_HINT = "esc to interrupt"


class OutputTail:
    """A running command's latest lines and how many it printed; `\\r` redraws the line it is on
    (a progress bar), as a terminal would."""

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=OUTPUT_LINES_SHOWN)
        self.partial = ""
        self.count = 0  # whole lines

    def feed(self, text: str) -> None:
        *whole, self.partial = (self.partial + text).split("\n")
        for line in whole:
            self.lines.append(_as_shown(line))
            self.count += 1
        self.partial = self.partial[-LINE_MAX_CHARS * 4 :]

    def shown(self) -> list[str]:
        partial = _as_shown(self.partial)
        lines = [*self.lines, partial] if partial.strip() else list(self.lines)
        return lines[-OUTPUT_LINES_SHOWN:]


class TurnProgress:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.started: float | None = None
        self._tokens = 0
        self._streamed_chars = 0
        self._tools: dict[str, tuple[float, OutputTail]] = {}
        self.subagents: dict[str, str] = {}  # a line per running sub-agent, by its call's id

    def on(self, event: Event) -> None:
        match event:
            case RequestStarted():
                self.started = self._clock() if self.started is None else self.started
                self._streamed_chars = 0
            case TextDelta(text=text) if self.started is not None:
                self._streamed_chars += len(text)
            case UsageReport(output_tokens=tokens):
                self._tokens += tokens
                self._streamed_chars = 0
            case ToolStarted(tool_use_id=tool_id):
                self._tools[tool_id] = (self._clock(), OutputTail())
            case ToolOutput(tool_use_id=tool_id, text=text) if tool_id in self._tools:
                self._tools[tool_id][1].feed(text)
            case ToolFinished(tool_use_id=tool_id):
                self._tools.pop(tool_id, None)
                self.subagents.pop(tool_id, None)
            case SubagentProgress(tool_use_id=tool_id, finished=None):
                tools = f"{event.tools_used} tool{'s' if event.tools_used != 1 else ''}"
                self.subagents[tool_id] = f"{event.agent}: {event.task} · {tools} · {event.tokens:,} tokens"
            case SubagentProgress(tool_use_id=tool_id):
                self.subagents.pop(tool_id, None)
            case TurnEnded():
                self.reset()

    def reset(self) -> None:
        self.started = None
        self._tokens = self._streamed_chars = 0
        self._tools.clear()
        self.subagents.clear()

    def running_output(self) -> OutputTail | None:
        """The output of the tool running now (the latest started), if it printed any."""
        if not self._tools:
            return None
        tail = list(self._tools.values())[-1][1]
        return tail if tail.count or tail.partial.strip() else None

    def suffix(self) -> str:
        """`(12s · ↓ 1.2k tokens · esc to interrupt)`: how long the turn (or the running tool) has
        taken, and its tokens so far."""
        parts = []
        if self._tools:
            parts.append(_seconds(self._clock() - list(self._tools.values())[-1][0]))
        elif self.started is not None:
            parts.append(_seconds(self._clock() - self.started))
        tokens = self._tokens + self._streamed_chars // CHARS_PER_TOKEN
        if tokens:
            parts.append(f"↓ {short_tokens(tokens)} {'token' if tokens == 1 else 'tokens'}")
        parts.append(INTERRUPT_HINT)
        return f"({' · '.join(parts)})"


def _seconds(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds}s" if seconds < 60 else f"{seconds // 60}m {seconds % 60:02d}s"


def _as_shown(line: str) -> str:
    return line.rstrip("\r").rsplit("\r", 1)[-1].rstrip()[:LINE_MAX_CHARS]
