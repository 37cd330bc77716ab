"""The REPL's event sink: turns agent events into terminal output.

Interactive: a transient spinner while waiting; streamed markdown printed block by block, each
finished block once, above a live region that holds only the unfinished tail (refreshed at a
bounded rate, so cost stays linear in the reply); one line per tool call.
Plain: no spinner, no live region, no escape codes; text passes through as it arrives.
NO_COLOR (https://no-color.org) only takes the colour away: markdown and the live tail stay.
Either way, every outside string (reply text, tool names and summaries, notices, file names)
is made visible at the door (`ui/visible.py`): control characters are written out, never sent.

The caller owns the console; `create_console` makes the right one for each mode.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal, TextIO

from mini_claude.events import (
    Event,
    MemoriesRecalled,
    Notice,
    RequestStarted,
    TextDelta,
    TextDone,
    ToolFinished,
    ToolPreparing,
    ToolStarted,
    TurnEnded,
)
from mini_claude.ui.live_tail import CODE_THEME, TailView, joins_previous, piece_renderable
from mini_claude.ui.markdown_stream import MarkdownStream, Piece
from mini_claude.ui.visible import VisibleStream, visible_event

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live
    from rich.spinner import Spinner

TEXT_REFRESH_PER_SECOND = 10
SPINNER_REFRESH_PER_SECOND = 12.5
THINKING_LABEL = "Thinking…"
# Lists and code fences longer than this share of the screen are printed in parts as they stream.
COMMIT_SCREEN_FRACTION = 2
MIN_COMMIT_LINES = 6
MIN_ARGUMENT_CHARS = 12
NOTICE_STYLES = {"info": "dim", "warning": "yellow", "error": "red"}

OutputKind = Literal["text", "line"]


def create_console(*, plain: bool, file: TextIO | None = None) -> Console:
    """Interactive: rich's defaults (it honours the terminal width), without colour under NO_COLOR
    (bold, underline and dim stay). Plain: no colour, no styles, no cursor tricks and no hard
    wrapping, whatever `file` is. Either way strings are printed as text (no markup, no emoji
    codes) after passing the terminal gate (`VisibleConsole`)."""
    from mini_claude.ui.visible_console import VisibleConsole

    if plain:
        return VisibleConsole(
            file=file, color_system=None, no_color=True, force_terminal=False, force_interactive=False,
            highlight=False, emoji=False, markup=False, soft_wrap=True,
        )  # fmt: skip
    # https://no-color.org: NO_COLOR set to anything but the empty string.
    no_color = bool(os.environ.get("NO_COLOR"))
    return VisibleConsole(file=file, highlight=False, emoji=False, markup=False, no_color=no_color)


def plain_mode_wanted(*, flag: bool, stdout: TextIO) -> bool:
    """--plain, or output that is not a terminal. NO_COLOR is not a reason: it removes colour only."""
    return flag or not stdout.isatty()


def render_markdown_once(console: Console, text: str) -> None:
    """Print a whole markdown text in one go (the baseline the streaming path is measured against)."""
    from rich.markdown import Markdown

    console.print(Markdown(text, code_theme=CODE_THEME))


class Renderer:
    """An `EventSink` for the REPL. Safe to call from the agent's thread while the main thread
    calls `pause()` / `interrupt()`."""

    def __init__(self, console: Console, *, plain: bool) -> None:
        self._console = console
        self._plain = plain
        self._lock = threading.RLock()
        commit_after = max(MIN_COMMIT_LINES, console.size.height // COMMIT_SCREEN_FRACTION)
        self._stream = MarkdownStream(commit_after_lines=commit_after)
        self._visible = VisibleStream()
        self._tail = TailView()
        self._unprinted: list[Piece] = []  # finished but not printed yet (survives a Ctrl+C)
        self._text_open = False
        self._plain_at_line_start = True
        self._discard_text = False  # after interrupt(): late deltas of the cut reply are dropped
        self._spinner_label: str | None = None
        self._pending_tools: dict[str, tuple[str, str]] = {}
        self._last_output: OutputKind | None = None
        self._paused = 0
        self._live: Live | None = None
        self._live_kind: Literal["text", "spinner"] | None = None
        self._spinner: Spinner | None = None
        self._redraws = threading.Event()  # set: the live display's redraw thread should end

    def __call__(self, event: Event) -> None:
        event = visible_event(event)  # before anything is measured or printed
        with self._lock:
            match event:
                case RequestStarted():
                    self._discard_text = False
                    self._end_text()
                    self._spinner_label = THINKING_LABEL
                case TextDelta(text=text):
                    self._on_text(text)
                case TextDone():
                    self._end_text()
                case ToolPreparing(name=name):
                    self._end_text()  # the model is writing a tool call; it can take a while
                    self._spinner_label = f"{name}(…)"
                case ToolStarted(tool_use_id=tool_id, name=name, summary=argument):
                    self._end_text()
                    self._pending_tools[tool_id] = (name, argument)
                    self._spinner_label = _call_label(name, argument)
                case ToolFinished():
                    self._on_tool_finished(event)
                case Notice(text=text, level=level):
                    self._spinner_label = None
                    self._sync_live()
                    self._print_line((text, NOTICE_STYLES[level]))
                case MemoriesRecalled(file_names=names) if names:
                    noun = "memory" if len(names) == 1 else "memories"
                    self._print_line((f"recalled {len(names)} {noun}: {', '.join(names)}", "dim"))
                case TurnEnded():
                    self._end_text()
                    self._spinner_label = None
                    self._pending_tools.clear()
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

    def interrupt(self) -> None:
        """After Ctrl+C: keep what was shown as final, stop the spinner, print nothing more."""
        with self._lock:
            self._discard_text = True
            self._spinner_label = None
            self._pending_tools.clear()
            self._end_text()
            self._sync_live()

    # -- text ---------------------------------------------------------------------------------

    def _on_text(self, text: str) -> None:
        if self._discard_text or not text:
            return
        self._show_text(self._visible.feed(text))

    def _show_text(self, text: str) -> None:
        if not text:
            return
        if self._plain:
            if not self._text_open:
                self._text_open = True
                if self._take_gap("text"):
                    self._console.file.write("\n")
            self._console.file.write(text)
            self._console.file.flush()
            self._plain_at_line_start = text.endswith("\n")
            return
        if not self._text_open:
            self._text_open = True
            self._spinner_label = None
            self._sync_live()
        self._unprinted += self._stream.feed(text)
        self._publish_tail()
        self._print_pieces()

    def _end_text(self) -> None:
        """The reply (so far) is final: print its tail as finished and close the live region."""
        held = self._visible.finish()
        if not self._discard_text:
            self._show_text(held)
        if self._plain:
            if self._text_open and not self._plain_at_line_start:
                self._console.file.write("\n")
            self._text_open, self._plain_at_line_start = False, True
            return
        self._unprinted += self._stream.finish()
        self._text_open = False
        self._tail.show(None, gap_above=False)
        self._sync_live()  # the transient live region erases itself before the tail is printed
        self._print_pieces()

    def _publish_tail(self) -> None:
        snapshot = self._stream.snapshot()
        # Decided as if the pieces about to be printed were already on screen.
        last = "text" if self._unprinted else self._last_output
        self._tail.show(snapshot, gap_above=_needs_gap(last, "text", joins=joins_previous(snapshot)))

    def _print_pieces(self) -> None:
        while self._unprinted:
            piece = self._unprinted[0]
            gap = self._take_gap("text", joins=joins_previous(piece))
            self._print(piece_renderable(piece), gap=gap)
            self._unprinted.pop(0)

    # -- lines --------------------------------------------------------------------------------

    def _on_tool_finished(self, event: ToolFinished) -> None:
        _, argument = self._pending_tools.pop(event.tool_use_id, (event.name, ""))
        still_running = list(self._pending_tools.values())
        self._spinner_label = _call_label(*still_running[-1]) if still_running else None
        self._sync_live()
        result = _first_line(event.summary)
        # One screen line, shortening the argument rather than the result; but an error's reason
        # is what the user must read, so when it does not fit it wraps instead of being cut.
        wraps = False
        if not self._plain:
            room = self._console.width - len(event.name) - len(result) - 8
            if event.is_error and room < MIN_ARGUMENT_CHARS:
                wraps, room = True, self._console.width - len(event.name) - 8
            argument = _fit_middle(_first_line(argument), max(room, MIN_ARGUMENT_CHARS))
        self._print_line(
            # A mark, not only a colour, tells an error apart (NO_COLOR, plain output).
            ("✗ " if event.is_error else "● ", "red" if event.is_error else "green"),
            (_call_label(event.name, argument), "bold"),
            (f" → {result}" if result else "", "red" if event.is_error else "dim"),
            truncate=not wraps,
        )

    def _print_line(self, *parts: tuple[str, str], truncate: bool = False) -> None:
        from rich.text import Text

        line = Text.assemble(*((text, "" if self._plain else style) for text, style in parts))
        gap = self._take_gap("line")
        if self._text_open and not self._plain:
            self._publish_tail()  # the tail now follows this line, not text
        if truncate and not self._plain:  # one screen line, whatever the width
            line.truncate(self._console.width, overflow="ellipsis")
            self._print(line, gap=gap, no_wrap=True, overflow="ellipsis", crop=True)
        else:
            self._print(line, gap=gap, soft_wrap=self._plain)

    def _take_gap(self, kind: OutputKind, *, joins: bool = False) -> bool:
        gap = _needs_gap(self._last_output, kind, joins=joins)
        self._last_output = kind
        return gap

    def _print(self, renderable: RenderableType, *, gap: bool, **options: Any) -> None:
        # One print call with the gap included: each print redraws the live region below it.
        if gap:
            from rich.console import Group
            from rich.text import Text

            renderable = Group(Text(), renderable)
        self._console.print(renderable, **options)

    # -- spinner and live region --------------------------------------------------------------

    def _sync_live(self) -> None:
        """Start, stop or relabel the one live display so it matches the current state."""
        want: Literal["text", "spinner"] | None = None
        if not self._plain and not self._paused:
            want = "text" if self._text_open else "spinner" if self._spinner_label else None
        if want == self._live_kind:
            if want == "spinner" and self._spinner is not None:
                self._spinner.update(text=self._spinner_text())
            return
        if self._live is not None:
            self._redraws.set()  # stops the redraw thread of this display
            self._live.stop()
            self._live = self._live_kind = self._spinner = None
        if want is None:
            return
        from rich.live import Live
        from rich.spinner import Spinner

        if want == "spinner":
            self._spinner = Spinner("dots", text=self._spinner_text(), style="cyan")
            renderable, rate = self._spinner, SPINNER_REFRESH_PER_SECOND
        else:
            renderable, rate = self._tail, TEXT_REFRESH_PER_SECOND
        # Redrawn by our own thread, under our lock: rich's refresh thread could interleave a
        # redraw with a print from the event thread and erase the wrong lines.
        live = Live(
            renderable, console=self._console, transient=True, auto_refresh=False,
            vertical_overflow="visible", redirect_stdout=False, redirect_stderr=False,
        )  # fmt: skip
        self._live, self._live_kind = live, want
        live.start(refresh=True)
        self._redraws = threading.Event()
        threading.Thread(target=self._redraw, args=(live, self._redraws, 1 / rate), daemon=True).start()

    def _redraw(self, live: Live, stopped: threading.Event, interval: float) -> None:
        while not stopped.wait(interval):
            with self._lock:
                if not stopped.is_set():
                    live.refresh()

    def _spinner_text(self) -> RenderableType:
        from rich.text import Text

        label = self._spinner_label or ""
        return Text(label, style="dim", no_wrap=True, overflow="ellipsis")


def _needs_gap(last: OutputKind | None, kind: OutputKind, *, joins: bool) -> bool:
    """A blank line between markdown blocks, and between text and other lines."""
    return last is not None and not (joins and last == "text") and (kind == "text" or last != kind)


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] + (" …" if len(lines) > 1 else "") if lines else ""


def _fit_middle(text: str, width: int) -> str:
    """`/very/long/…/file.py`: both ends of a path or command say more than its middle."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def _call_label(name: str, argument: str) -> str:
    argument = _first_line(argument)
    return f"{name}({argument})" if argument else name
