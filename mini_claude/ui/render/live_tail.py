"""Rendering streamed markdown pieces, and the live region that shows the unfinished tail."""

from __future__ import annotations

import functools
import importlib
import logging
import threading
import time
from typing import TYPE_CHECKING, Any, ClassVar

from mini_claude.core.untrusted import visible_lines
from mini_claude.ui.render.markdown_stream import CodeSlice, Piece, TailSnapshot

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, JustifyMethod, RenderableType, RenderResult
    from rich.segment import Segment

CODE_THEME = "monokai"  # rich Markdown's default, so code slices look like whole code blocks
# Share of wall time the live region may spend re-rendering a tail that keeps growing: bounds
# the cost of a huge block that cannot be cut (a long table or paragraph).
TAIL_RENDER_BUDGET = 0.2

log = logging.getLogger("mini_claude")
_preload_started = threading.Event()


def preload_markdown() -> None:
    """Import rich's markdown renderer on a daemon thread while the user types: it takes ~50 ms,
    which the first reply would otherwise wait for."""
    if not _preload_started.is_set():
        _preload_started.set()
        threading.Thread(target=_import_markdown, name="markdown-preload", daemon=True).start()


def _import_markdown() -> None:
    started = time.perf_counter()
    for module in ("rich.markdown", "rich.syntax"):
        importlib.import_module(module)
    log.debug("markdown renderer loaded in %.2f s", time.perf_counter() - started)


def piece_renderable(piece: Piece) -> RenderableType:
    # rich.markdown is slow to import, so it is imported on first use.
    if isinstance(piece, CodeSlice):
        from rich.syntax import Syntax

        # Rich's code blocks have padding 1 all round; the slices of one block share it out.
        padding = (int(piece.first), 1, int(piece.last), 1)
        return Syntax(piece.code, piece.lexer, theme=CODE_THEME, word_wrap=True, padding=padding)
    return _MarkdownWithoutOuterBlankLines(piece.text)


class _MarkdownWithoutOuterBlankLines:
    """Markdown that leaves the spacing between blocks to the caller: rich starts a list with a
    blank line and ends a rule with one, which doubles the gap when blocks are printed apart."""

    def __init__(self, markdown_text: str) -> None:
        self.markdown_text = markdown_text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.markdown import Markdown
        from rich.segment import Segment

        # hyperlinks=False: a link is shown as "text (url)"; as an OSC 8 hyperlink its text could
        # name docs.python.org while a click opens another address.
        markdown = Markdown(self.markdown_text, code_theme=CODE_THEME, hyperlinks=False)
        markdown.elements = left_aligned_elements()  # type: ignore[misc]  # this one's, not the class's
        segments = list(console.render(markdown, options))
        start = 1 if segments and segments[0].text == "\n" else 0
        end = len(segments)
        if end - start > 3 and [segment.text for segment in segments[-3:]] == ["\n", "", "\n"]:
            end -= 2  # the empty line after a rule
        for segment in segments[start:end]:
            # The text was made visible before parsing, but markdown decodes character references:
            # `&#x202e;` would become a real bidi override here.
            if segment.control is None and (shown := visible_lines(segment.text)) != segment.text:
                segment = Segment(shown, segment.style)
            if segment.style is not None and segment.style.link:  # none expected: never a hidden URL
                segment = Segment(segment.text, segment.style.update_link(None), segment.control)
            yield segment


@functools.cache
def left_aligned_elements() -> dict[str, type[Any]]:
    """rich centres a level-1 heading; in a terminal transcript every line starts at the left,
    so a heading reads as the start of what follows, not as a title floating mid-screen."""
    from rich.markdown import Heading, Markdown

    class LeftHeading(Heading):
        LEVEL_ALIGN: ClassVar[dict[str, JustifyMethod]] = dict.fromkeys(Heading.LEVEL_ALIGN, "left")

    return {**Markdown.elements, "heading_open": LeftHeading}


def joins_previous(piece: Piece | TailSnapshot) -> bool:
    """Continues the piece above it on screen (a list's later items, a code block's later lines)."""
    if isinstance(piece, TailSnapshot):
        return piece.continues_list or piece.fence is not None
    return not piece.first if isinstance(piece, CodeSlice) else piece.continues_list


class TailView:
    """The live region's content: the unfinished tail, cropped to the screen's last lines."""

    def __init__(self) -> None:
        self._shown: tuple[TailSnapshot | None, bool] = (None, False)
        self._cache: tuple[TailSnapshot | None, bool, int, list[list[Segment]]] = (None, False, 0, [])
        self._rendered_at = 0.0
        self._render_seconds = 0.0

    def show(self, snapshot: TailSnapshot | None, *, gap_above: bool) -> None:
        self._shown = (snapshot, gap_above)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        for index, line in enumerate(self._lines(console, options)):
            if index:
                yield Segment.line()
            yield from line

    def _lines(self, console: Console, options: ConsoleOptions) -> list[list[Segment]]:
        snapshot, gap_above = self._shown
        cached_snapshot, cached_gap, cached_width, cached_lines = self._cache
        if snapshot is None:
            return []
        rows = options.height or max(1, options.size.height - 2)
        if (snapshot, gap_above, options.max_width) == (cached_snapshot, cached_gap, cached_width):
            return cached_lines[-rows:]
        if self._may_reuse(snapshot, cached_snapshot):
            return cached_lines[-rows:]
        started = time.perf_counter()
        piece = snapshot.as_piece()
        unbounded = options.update(height=None)  # a height would pad the tail with blank lines to it
        lines = [] if piece is None else console.render_lines(piece_renderable(piece), unbounded, pad=False)
        # Newest lines only: a live region taller than the screen cannot be redrawn in place.
        lines = lines[-max(1, options.size.height - 2) :]
        if gap_above and lines:
            lines.insert(0, [])
        self._rendered_at = time.perf_counter()
        self._render_seconds = self._rendered_at - started
        self._cache = (snapshot, gap_above, options.max_width, lines)
        return lines[-rows:]

    def _may_reuse(self, snapshot: TailSnapshot, cached: TailSnapshot | None) -> bool:
        """A slightly stale frame is fine while one block grows; a replaced block is not."""
        if cached is None or snapshot.lines is not cached.lines or snapshot.count < cached.count:
            return False
        return time.perf_counter() - self._rendered_at < self._render_seconds / TAIL_RENDER_BUDGET


def markdown_view(text: str) -> RenderableType:
    """Untrusted markdown (a plan) to print whole: made visible, then rendered."""
    return _MarkdownWithoutOuterBlankLines(visible_lines(text))
