"""The interactive renderer: a transient spinner while waiting; streamed markdown printed block by
block, each finished block once, above a live region that holds only the unfinished tail
(refreshed at a bounded rate, so cost stays linear in the reply); tool lines fitted to the screen."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from mini_claude.core.events import ToolFinished
from mini_claude.ui.render.live_region import LiveRegion
from mini_claude.ui.render.live_tail import TailView, joins_previous, piece_renderable
from mini_claude.ui.render.markdown_stream import MarkdownStream, Piece
from mini_claude.ui.render.renderer import Renderer, needs_gap

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live

REFRESH_PER_SECOND = 10
WRITING_LABEL = "Writing…"
# Lists and code fences longer than this share of the screen are printed in parts as they stream.
COMMIT_SCREEN_FRACTION = 2
MIN_COMMIT_LINES = 6
MIN_ARGUMENT_CHARS = 12
TOOL_LINE_FRAME_CHARS = 8  # the mark, the parentheses and the arrow around name, argument, result


class LiveRenderer(Renderer):
    def __init__(self, console: Console) -> None:
        super().__init__(console)
        commit_after = max(MIN_COMMIT_LINES, console.size.height // COMMIT_SCREEN_FRACTION)
        self._stream = MarkdownStream(commit_after_lines=commit_after)
        self._tail = TailView()
        self._unprinted: list[Piece] = []  # finished but not printed yet (survives a Ctrl+C)
        self._live: Live | None = None
        self._redraws = threading.Event()  # set: the live display's redraw thread should end
        self._region = LiveRegion(self._tail, self.progress, lambda: self.typed(), lambda: self.mode())

    # -- text ---------------------------------------------------------------------------------

    def _show_text(self, text: str) -> None:
        if not text:
            return
        if not self._text_open:
            self._text_open = True
            self._spinner_label = None
            self._sync_live()
        self._unprinted += self._stream.feed(text)
        self._publish_tail()
        self._print_pieces()

    def _close_text(self) -> None:
        self._unprinted += self._stream.finish()
        self._text_open = False
        self._tail.show(None, gap_above=False)
        self._sync_live()  # the transient live region erases itself before the tail is printed
        self._print_pieces()

    def _publish_tail(self) -> None:
        snapshot = self._stream.snapshot()
        # Decided as if the pieces about to be printed were already on screen.
        last = "text" if self._unprinted else self._last_output
        self._tail.show(snapshot, gap_above=needs_gap(last, "text", joins=joins_previous(snapshot)))

    def _print_pieces(self) -> None:
        while self._unprinted:
            piece = self._unprinted[0]
            gap = self._take_gap("text", joins=joins_previous(piece))
            self._print(piece_renderable(piece), gap=gap)
            self._unprinted.pop(0)

    # -- lines --------------------------------------------------------------------------------

    def _tool_argument(self, event: ToolFinished, argument: str, result: str) -> tuple[str, bool]:
        # One screen line, shortening the argument rather than the result; but an error's reason
        # is what the user must read, so when it does not fit it wraps instead of being cut.
        wraps = False
        room = self._console.width - len(event.name) - len(result) - TOOL_LINE_FRAME_CHARS
        if event.is_error and room < MIN_ARGUMENT_CHARS:
            wraps, room = True, self._console.width - len(event.name) - TOOL_LINE_FRAME_CHARS
        return fit_argument(argument, max(room, MIN_ARGUMENT_CHARS)), wraps

    def _print_line(self, *parts: tuple[str, str], truncate: bool = False) -> None:
        from rich.text import Text

        line = Text.assemble(*parts)
        gap = self._take_gap("line")
        if self._text_open:
            self._publish_tail()  # the tail now follows this line, not text
        if truncate:  # one screen line, whatever the width
            line.truncate(self._console.width, overflow="ellipsis")
            self._print(line, gap=gap, no_wrap=True, overflow="ellipsis", crop=True)
        else:
            self._print(line, gap=gap)

    # -- the live region ----------------------------------------------------------------------

    def typed_changed(self) -> None:
        """What the user types during the turn changed: show it now, not at the next redraw."""
        with self._lock:
            self._sync_live()
            if self._live is not None:
                self._live.refresh()

    def _sync_live(self) -> None:
        """Start, stop or update the one live display so it matches the current state."""
        region = self._region
        label = self._spinner_label
        if label is None and self._text_open and self.progress.started is not None:
            label = WRITING_LABEL  # the reply streams: the status line stays, with its time and tokens
        changed = (region.label, region.text_open) != (label, self._text_open)
        region.label, region.text_open = label, self._text_open
        want = not self._paused and region.wanted()
        if want == (self._live is not None):
            if changed and self._live is not None:
                self._live.refresh()  # a new state is drawn at once; the text waits for the next redraw
            return
        if self._live is not None:
            self._redraws.set()  # stops the redraw thread of this display
            self._live.stop()
            self._live = None
        if not want:
            return
        from rich.live import Live

        # Redrawn by our own thread, under our lock: rich's refresh thread could interleave a
        # redraw with a print from the event thread and erase the wrong lines.
        live = Live(
            region, console=self._console, transient=True, auto_refresh=False,
            vertical_overflow="visible", redirect_stdout=False, redirect_stderr=False,
        )  # fmt: skip
        self._live = live
        live.start(refresh=True)
        self._redraws = threading.Event()
        threading.Thread(
            target=self._redraw, args=(live, self._redraws, 1 / REFRESH_PER_SECOND), daemon=True
        ).start()

    def _redraw(self, live: Live, stopped: threading.Event, interval: float) -> None:
        while not stopped.wait(interval):
            with self._lock:
                if not stopped.is_set():
                    live.refresh()


def fit_argument(text: str, width: int) -> str:
    """A path cut from the left, keeping its file name (`…/render/live_renderer.py`); a command
    in the middle (`pytest -q … tests/test_x.py`): both its ends say more than its middle."""
    if len(text) <= width:
        return text
    if "/" in text and not any(char.isspace() for char in text):
        return "…" + text[len(text) - (width - 1) :]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]
