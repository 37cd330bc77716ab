"""The REPL's event sink: turns agent events into terminal output, one line per tool call.

Two renderers share what follows: `PlainRenderer` (no spinner, no live region, no escape codes;
text passes through as it arrives) and `LiveRenderer` in `ui/render/live_renderer.py` (a spinner while
waiting, streamed markdown printed block by block above a live region holding the unfinished
tail). NO_COLOR (https://no-color.org) only takes the colour away: markdown and the live tail stay.
Either way, every outside string (reply text, tool names and summaries, notices, file names)
is made visible at the door (`ui/render/visible.py`): control characters are written out, never sent.

The caller owns the console; `ui/render/console.py` makes the right console and renderer for each mode.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

from mini_claude.core.events import (
    CompactionStarted,
    ContextCompacted,
    ContextStatus,
    Event,
    MemoriesRecalled,
    Notice,
    RequestStarted,
    Retrying,
    SubagentProgress,
    TextDelta,
    TextDone,
    ThinkingBlock,
    ToolFinished,
    ToolPreparing,
    ToolStarted,
    TurnEnded,
)
from mini_claude.ui.render.context_view import ContextLineGate, compaction_announcement, context_indicator
from mini_claude.ui.render.live_region import Typed
from mini_claude.ui.render.thinking_view import thinking_line
from mini_claude.ui.render.turn_progress import TurnProgress
from mini_claude.ui.render.visible import VisibleStream, visible_event

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

THINKING_LABEL = "Thinking…"
COMPACTING_LABEL = "Compacting…"
NOTICE_STYLES = {"info": "dim", "warning": "yellow", "error": "red"}
DETAIL_INDENT = "    "  # lines under a tool line
MORE_HINT = " (ctrl+o to see all)"

OutputKind = Literal["text", "line"]


class Renderer:
    """An `EventSink` for the REPL. Safe to call from the agent's thread while the main thread
    calls `pause()` / `interrupt()`. Subclasses show text, lines and the waiting state."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._lock = threading.RLock()
        self._visible = VisibleStream()
        self._text_open = False
        self._discard_text = False  # after interrupt(): late deltas of the cut reply are dropped
        self._spinner_label: str | None = None
        self._pending_tools: dict[str, tuple[str, str]] = {}
        self._last_output: OutputKind | None = None
        self._paused = 0
        self.context_line = ContextLineGate()  # reset by the REPL for a new or resumed conversation
        self.progress = TurnProgress()
        self._previewed: set[str] = set()  # calls whose question showed the change they make
        self.typed: Callable[[], Typed] = Typed  # what the user types during a turn (the REPL's)
        self.mode: Callable[[], str] = lambda: "ask"  # the permission mode's name (the REPL's)

    def __call__(self, event: Event) -> None:
        event = visible_event(event)  # before anything is measured or printed
        with self._lock:
            self.progress.on(event)
            match event:
                case RequestStarted():
                    self._discard_text = False
                    self._end_text()
                    self._spinner_label = THINKING_LABEL
                case TextDelta(text=text) if text and not self._discard_text:
                    self._show_text(self._visible.feed(text))
                case TextDone():
                    self._end_text()
                case ThinkingBlock() if (line := thinking_line(event)) is not None:
                    self._print_line((line, "dim"))
                case ToolPreparing(name=name):
                    self._end_text()  # the model is writing a tool call; it can take a while
                    self._spinner_label = f"{name}(…)"
                case ToolStarted(tool_use_id=tool_id, name=name, summary=argument):
                    self._end_text()
                    self._pending_tools[tool_id] = (name, argument)
                    self._spinner_label = call_label(name, argument)
                case ToolFinished():
                    self._on_tool_finished(event)
                case SubagentProgress() if self.progress.subagents:  # a line per running sub-agent
                    self._spinner_label = "\n".join(self.progress.subagents.values())
                case Retrying():
                    self._on_retry(event)
                case Notice(text=text, level=level):
                    self._spinner_label = None
                    self._sync_live()
                    self._print_line((text, NOTICE_STYLES[level]))
                case CompactionStarted():
                    self._end_text()
                    self._spinner_label = COMPACTING_LABEL
                case ContextCompacted():
                    self._spinner_label = None
                    self._sync_live()
                    self.context_line.compacted(event)
                    self._print_line((compaction_announcement(event), "dim"))
                case ContextStatus() if self.context_line.wanted(event):
                    self._print_line((context_indicator(event), "dim"))
                case MemoriesRecalled(file_names=names) if names:
                    self._print_line((recalled_line(names), "dim"))
                case TurnEnded():
                    self._end_text()
                    self._spinner_label = None
                    self._pending_tools.clear()
                    self._previewed.clear()
                    self._discard_text = False
                    self._last_output = None
            self._sync_live()

    @contextmanager
    def pause(self) -> Iterator[None]:
        """Hide the spinner / live region while the REPL asks something; restore it afterwards."""
        with self._lock:
            self._paused += 1
            self._sync_live()
        try:
            yield
        finally:
            with self._lock:
                self._paused -= 1
                self._sync_live()

    def typed_changed(self) -> None:
        """What the user types during the turn changed (shown by the live renderer only)."""

    def question_showed_change(self) -> None:
        """The permission question of the call running now showed the change it makes: its line
        does not show it again."""
        with self._lock:
            if self._pending_tools:
                self._previewed.add(list(self._pending_tools)[-1])

    def interrupt(self) -> None:
        """After Ctrl+C: keep what was shown as final, stop the spinner, print nothing more."""
        with self._lock:
            self._discard_text = True
            self._spinner_label = None
            self._pending_tools.clear()
            self.progress.reset()
            self._end_text()
            self._sync_live()

    # -- what each renderer does its own way ------------------------------------------------

    def _show_text(self, text: str) -> None:
        raise NotImplementedError

    def _close_text(self) -> None:
        """The reply (so far) is final: finish what is shown of it."""
        raise NotImplementedError

    def _tool_argument(self, event: ToolFinished, argument: str, result: str) -> tuple[str, bool]:
        """The argument as the tool line shows it, and whether the line may wrap."""
        return argument, True

    def _print_line(self, *parts: tuple[str, str], truncate: bool = False) -> None:
        raise NotImplementedError

    def _sync_live(self) -> None:
        """Start, stop or relabel whatever shows that mini-claude is waiting."""

    def _on_retry(self, event: Retrying) -> None:
        """The spinner says why nothing streams yet (until the retry's reply starts)."""
        self._spinner_label = retry_label(event)

    # -- shared -----------------------------------------------------------------------------

    def _end_text(self) -> None:
        held = self._visible.finish()
        if not self._discard_text:
            self._show_text(held)
        self._close_text()

    def _on_tool_finished(self, event: ToolFinished) -> None:
        _, argument = self._pending_tools.pop(event.tool_use_id, (event.name, ""))
        still_running = list(self._pending_tools.values())
        self._spinner_label = call_label(*still_running[-1]) if still_running else None
        self._sync_live()
        argument, wraps = self._tool_argument(event, argument, event.summary)
        self._print_line(
            # A mark, not only a colour, tells an error apart (NO_COLOR, plain output).
            ("✗ " if event.is_error else "● ", "red" if event.is_error else "green"),
            (call_label(event.name, argument), "bold"),
            (f" → {event.summary}" if event.summary else "", "red" if event.is_error else "dim"),
            truncate=not wraps,
        )
        # A command's output collapsed, a change made without a question, a memory saved (what,
        # where, the change); a change its question showed already is not shown again.
        shown_already = event.tool_use_id in self._previewed
        for line in event.detail:
            if shown_already and is_change_line(line):
                continue
            style = {"+": "green", "-": "red"}.get(line[:1], "dim") if line[1:2] == " " else "dim"
            more = MORE_HINT if line.startswith("… +") else ""
            self._print_line((DETAIL_INDENT + line + more, style))

    def _take_gap(self, kind: OutputKind, *, joins: bool = False) -> bool:
        gap = needs_gap(self._last_output, kind, joins=joins)
        self._last_output = kind
        return gap

    def _print(self, renderable: RenderableType, *, gap: bool, **options: Any) -> None:
        # One print call with the gap included: each print redraws a live region below it.
        if gap:
            from rich.console import Group
            from rich.text import Text

            renderable = Group(Text(), renderable)
        self._console.print(renderable, **options)


class PlainRenderer(Renderer):
    """Text as it arrives, lines without style: for `--plain` and output that is not a terminal.
    While waiting for the model it prints one `Thinking…` line, once per wait: no animation."""

    def __init__(self, console: Console) -> None:
        super().__init__(console)
        self._at_line_start = True
        self._wait_told = False  # this wait's progress line is printed

    def _sync_live(self) -> None:
        waiting = self._spinner_label == THINKING_LABEL and not self._text_open
        if waiting and not self._wait_told and not self._paused:
            self._wait_told = True
            self._print_line((THINKING_LABEL, "dim"))
        elif self._spinner_label != THINKING_LABEL:
            self._wait_told = False

    def _show_text(self, text: str) -> None:
        if not text:
            return
        if not self._text_open:
            self._text_open = True
            if self._take_gap("text"):
                self._console.file.write("\n")
        self._console.file.write(text)
        self._console.file.flush()
        self._at_line_start = text.endswith("\n")

    def _close_text(self) -> None:
        if self._text_open and not self._at_line_start:
            self._console.file.write("\n")
        self._text_open, self._at_line_start = False, True

    def _print_line(self, *parts: tuple[str, str], truncate: bool = False) -> None:
        from rich.text import Text

        line = Text("".join(text for text, _ in parts))
        self._print(line, gap=self._take_gap("line"), soft_wrap=True)

    def _on_retry(self, event: Retrying) -> None:
        self._print_line((retry_label(event), "dim"))  # no spinner to label: a line says it


def needs_gap(last: OutputKind | None, kind: OutputKind, *, joins: bool) -> bool:
    """A blank line between markdown blocks, and between text and other lines."""
    return last is not None and not (joins and last == "text") and (kind == "text" or last != kind)


def is_change_line(line: str) -> bool:
    """A line of a change under a tool line (`+ added`, `- removed`, `… +3 changed lines`)."""
    return line[:2] in ("+ ", "- ") or (line.startswith("… ") and "changed line" in line)


def retry_label(event: Retrying) -> str:
    """`API error 529 (overloaded): retrying in 2 s (retry 1 of 2)…`"""
    delay = event.delay_s
    seconds = f"{delay:.0f}" if delay >= 10 else f"{delay:.1f}".removesuffix(".0")
    return f"{event.reason}: retrying in {seconds} s (retry {event.attempt} of {event.max_retries})…"


def recalled_line(names: tuple[str, ...]) -> str:
    """`recalled 2 memories: a.md, b.md` (REPL and print mode alike)."""
    return f"recalled {len(names)} {'memory' if len(names) == 1 else 'memories'}: {', '.join(names)}"


def call_label(name: str, argument: str) -> str:
    """`name(argument)`; the argument is one line already (`visible_event`)."""
    return f"{name}({argument})" if argument else name
