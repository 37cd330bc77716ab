"""Split streamed markdown into finished pieces, so each piece is rendered exactly once.

A block is finished once a later block has started (a blank line after a paragraph, a heading,
a fence that opens or closes, ...). Pieces are cut only where the whole document would have a
top-level block boundary too, so rendering them one by one looks like rendering the reply once.
When unsure, lines stay together: merging is always safe, a wrong cut is not.
Long lists and long code fences are cut at item / line boundaries so no piece grows unbounded.
This module is pure text (no rich) and does O(1) work per streamed character.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mini_claude.ui.render.markdown_lines import (
    HEADING,
    LIST_ITEM,
    THEMATIC_BREAK,
    Fence,
    closes_fence,
    dedent_code,
    html_raw_end,
    indent_width,
    interrupts_list,
    interrupts_paragraph,
    is_blank,
    list_key,
    open_fence,
)


@dataclass(frozen=True)
class MarkdownBlock:
    """Markdown source of one or more whole top-level blocks."""

    text: str
    continues_list: bool = False  # later items of a list whose first items were emitted already


@dataclass(frozen=True)
class CodeSlice:
    """Consecutive lines of a long fenced code block, emitted before the fence closed."""

    code: str
    lexer: str
    first: bool  # carries the code block's top padding
    last: bool  # carries the bottom padding


Piece = MarkdownBlock | CodeSlice


@dataclass(frozen=True)
class TailSnapshot:
    """The unfinished tail at one moment; cheap to take, safe to read from another thread."""

    lines: list[str]  # shared with the stream, which only appends to it or replaces it
    count: int
    partial: str
    continues_list: bool
    fence: Fence | None  # set when the tail is the rest of a code fence already partly emitted

    def as_piece(self) -> Piece | None:
        text = "".join(self.lines[: self.count]) + self.partial
        if not text.strip():
            return None
        if self.fence is not None:
            code = dedent_code(text, self.fence.indent).removesuffix("\n")
            return CodeSlice(code, self.fence.lexer, first=False, last=True)
        return MarkdownBlock(text, self.continues_list)


class MarkdownStream:
    """Feed text deltas, get back the pieces that became finished."""

    def __init__(self, commit_after_lines: int = 8) -> None:
        # A list or code fence longer than this many lines is emitted in parts.
        self._commit_after_lines = max(2, commit_after_lines)
        self._partial = ""  # the line still being typed
        self._out: list[Piece] = []
        self._reset_block()

    def _reset_block(self) -> None:
        self._lines: list[str] = []  # complete lines of the unfinished block
        self._kind: str | None = None  # "para" | "list" | "fence" | "indented"
        self._fence: Fence | None = None
        self._fence_sliced = False
        self.list_key: tuple[int, str] | None = None
        self._continues_list = False
        self._after_blank = False
        self._html_end: str | None = None

    def feed(self, text: str) -> list[Piece]:
        if "\n" not in text:
            self._partial += text
            return []
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._on_line(line.removesuffix("\r") + "\n")
        return self._take_out()

    def finish(self) -> list[Piece]:
        """Everything not emitted yet, as final pieces; the stream is then empty again."""
        if self._partial:
            self._on_line(self._partial.removesuffix("\r") + "\n")
            self._partial = ""
        if self._kind == "fence" and self._fence_sliced:
            self._emit_code_slice(len(self._lines), last=True)
        self._emit()
        return self._take_out()

    def snapshot(self) -> TailSnapshot:
        sliced = self._fence if self._kind == "fence" and self._fence_sliced else None
        return TailSnapshot(self._lines, len(self._lines), self._partial, self._continues_list, sliced)

    def _take_out(self) -> list[Piece]:
        out, self._out = self._out, []
        return out

    # -- one complete line at a time --------------------------------------------------------

    def _on_line(self, line: str) -> None:
        if self._fence is not None:
            self._fence_line(line)
        elif self._html_end is not None:
            self._lines.append(line)
            if self._html_end in line.lower():
                self._html_end = None
        elif self._kind is None:
            self._start_block(line)
        elif self._kind == "para":
            self._paragraph_line(line)
        elif self._kind == "list":
            self._list_line(line)
        else:
            self._indented_code_line(line)

    def _start_block(self, line: str) -> None:
        if is_blank(line):
            return  # blank lines only separate blocks; rendering puts the gap back
        self._lines = [line]
        if fence := open_fence(line, nested=False):
            self._kind, self._fence = "fence", fence
        elif HEADING.match(line) or THEMATIC_BREAK.match(line):
            self._emit()  # one-line blocks are finished as soon as their line is
        elif match := LIST_ITEM.match(line):
            self._kind, self.list_key = "list", list_key(match)
        elif indent_width(line) >= 4:
            self._kind = "indented"
        else:
            self._kind = "para"
            self._html_end = html_raw_end(line)

    def _paragraph_line(self, line: str) -> None:
        if is_blank(line):
            self._emit()
        elif interrupts_paragraph(line):
            self._emit()
            self._start_block(line)
        else:
            self._lines.append(line)

    def _list_line(self, line: str) -> None:
        if is_blank(line):
            self._lines.append(line)
            self._after_blank = True
            return
        indent = indent_width(line)
        item = LIST_ITEM.match(line)
        if item and self._may_cut_list_before(item):
            # A new sibling item: the items before it are finished.
            self._emit(keep_kind=True)
            self._lines, self._continues_list = [line], True
        elif item or indent > 0 or not (self._after_blank or interrupts_list(line)):
            self._lines.append(line)  # an item, a continuation, or a lazy paragraph line
            if indent > 0 and (fence := open_fence(line, nested=True)):
                self._fence = fence
        else:
            self._emit()
            self._start_block(line)
            return
        self._after_blank = False

    def _may_cut_list_before(self, item: re.Match[str]) -> bool:
        if list_key(item) != self.list_key or len(self._lines) < self._commit_after_lines:
            return False
        # Rich sizes an ordered list's number column by its item count: from item 10 on, a cut
        # keeps the same width as the whole list (for lists of 9 to 98 items).
        return item.group(3) is None or int(item.group(3)) >= 10

    def _indented_code_line(self, line: str) -> None:
        if is_blank(line) or indent_width(line) >= 4:
            self._lines.append(line)
        else:
            self._emit()
            self._start_block(line)

    def _fence_line(self, line: str) -> None:
        fence = self._fence
        assert fence is not None
        if closes_fence(fence, line):
            if fence.nested:
                self._lines.append(line)
                self._fence = None
            elif self._fence_sliced:
                self._emit_code_slice(len(self._lines), last=True)
                self._reset_block()
            else:
                self._lines.append(line)
                self._emit()
            return
        self._lines.append(line)
        if not fence.nested and len(self._lines) > self._commit_after_lines:
            self._slice_fence()

    # -- emitting ---------------------------------------------------------------------------

    def _emit(self, *, keep_kind: bool = False) -> None:
        text = "".join(self._lines)
        if text.strip():
            self._out.append(MarkdownBlock(text, self._continues_list))
        if keep_kind:
            self._lines = []
        else:
            self._reset_block()

    def _slice_fence(self) -> None:
        if not self._fence_sliced:  # drop the opening line; the slices carry the padding instead
            self._lines = self._lines[1:]
        code = self._lines
        # Keep the last non-blank line back, so the last slice is never empty and trailing blank
        # lines, which a closed fence drops, are never printed. Prefer cutting before an
        # unindented line: it is less likely to split a multi-line string or comment.
        last_text = max((i for i, line in enumerate(code) if not is_blank(line)), default=0)
        starts = [k for k in range(len(code) // 2, last_text + 1) if code[k][:1] not in " \t\n"]
        cut = starts[-1] if starts else last_text
        if cut > 0:
            self._emit_code_slice(cut, last=False)

    def _emit_code_slice(self, end: int, *, last: bool) -> None:
        fence = self._fence
        assert fence is not None
        code = dedent_code("".join(self._lines[:end]), fence.indent)
        # Lines end with a newline; the last one must not, or Syntax shows an extra empty line.
        code = code.rstrip() if last else code.removesuffix("\n")  # rstrip: as rich's code blocks do
        self._out.append(CodeSlice(code, fence.lexer, first=not self._fence_sliced, last=last))
        self._lines = self._lines[end:]  # a new list: snapshots keep the old one intact
        self._fence_sliced = True
