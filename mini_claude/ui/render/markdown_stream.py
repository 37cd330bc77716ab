"""Split streamed markdown into finished pieces, so each piece is rendered exactly once.

markdown-it-py, the parser rich renders with, reads the unfinished tail whenever a line completes:
every top-level block but the last is finished, as no later line reopens a block that another has
closed; the last is finished too once nothing can extend it (a heading, a closed fence, a
paragraph after a blank line). Pieces are cut only there, so printing them one by one looks like
printing the reply once. A long list is cut before its newest item and a long code fence is
printed in slices, so the tail, which every parse reads, stays short.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

# A tail longer than this many times the commit size (a long table, paragraph or quote, which
# cannot be cut) is parsed again only once it has grown by a quarter: the parsing stays linear in
# the reply, and such a block is printed a little later (the live region shows it meanwhile).
LONG_TAIL_FACTOR = 2
LONG_TAIL_GROWTH = 4


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
    fence: str | None  # the opening line of a code fence whose first lines were emitted already

    def as_piece(self) -> Piece | None:
        text = "".join(self.lines[: self.count]) + self.partial
        if not text.strip():
            return None
        if self.fence is not None:
            code = _blocks(self.fence + text)[0].token  # the fence: its code without its indent
            return CodeSlice(code.content.removesuffix("\n"), _lexer(code), first=False, last=True)
        return MarkdownBlock(text, self.continues_list)


@dataclass
class _Block:
    """One top-level block of the tail, as markdown-it parsed it; a list's items with it."""

    token: Token
    items: list[Token] = field(default_factory=list)

    @property
    def start(self) -> int:
        return self.token.map[0] if self.token.map else 0

    @property
    def end(self) -> int:
        return self.token.map[1] if self.token.map else 0


class MarkdownStream:
    """Feed text deltas, get back the pieces that became finished."""

    def __init__(self, commit_after_lines: int = 8) -> None:
        # A list or code fence longer than this many lines is emitted in parts.
        self._commit_after_lines = max(2, commit_after_lines)
        self._partial = ""  # the line still being typed
        self._lines: list[str] = []  # complete lines of the unfinished tail
        self._fence: str | None = None  # opening line of a code fence being emitted in slices
        self._continues_list = False
        self._parse_at = 1  # the tail's length in lines at which to parse it again
        self._out: list[Piece] = []

    def feed(self, text: str) -> list[Piece]:
        if "\n" not in text:
            self._partial += text
            return []
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in (line.removesuffix("\r") for line in lines):
            if self._lines or self._fence is not None or not _is_blank(line):  # blanks only separate
                self._lines.append(line + "\n")
        if len(self._lines) >= self._parse_at:
            self._settle(final=False)
        return self._take_out()

    def finish(self) -> list[Piece]:
        """Everything not emitted yet, as final pieces; the stream is then empty again."""
        if self._partial:
            self._lines.append(self._partial.removesuffix("\r") + "\n")
            self._partial = ""
        self._settle(final=True)
        return self._take_out()

    def snapshot(self) -> TailSnapshot:
        return TailSnapshot(self._lines, len(self._lines), self._partial, self._continues_list, self._fence)

    def _take_out(self) -> list[Piece]:
        out, self._out = self._out, []
        return out

    def _settle(self, *, final: bool) -> None:
        """Emit the tail's finished blocks, then cut its last block if it is a long list or fence."""
        lines, shift = self._lines, int(self._fence is not None)  # the opening line is parsed first
        blocks = _blocks((self._fence or "") + "".join(lines))
        if not blocks:  # link reference definitions only: text that renders as nothing
            if final:
                self._emit(None, lines)
                self._lines = []
            return
        starts = [0] + [block.start - shift for block in blocks[1:]]
        done = len(blocks) - 1
        if final or _closed(blocks[-1], len(lines) + shift):
            done = len(blocks)
        for index in range(done):
            end = starts[index + 1] if index + 1 < len(blocks) else len(lines)
            while end > blocks[index].end - shift and _is_blank(lines[end - 1]):
                end -= 1  # blank lines after a block only separate it from the next
            self._emit(blocks[index], lines[starts[index] : end])
        rest = starts[done] if done < len(blocks) else len(lines)
        if rest:
            self._lines = lines = lines[rest:]  # a new list: snapshots keep the old one intact
        if done < len(blocks):
            last, offset = blocks[-1], shift + rest  # offset: from a parsed line to one of `lines`
            if last.token.type in ("bullet_list_open", "ordered_list_open"):
                self._cut_list(last, lines, offset)
            elif last.token.type == "fence":
                self._slice_fence(last, lines, offset)
        grown = len(self._lines) // LONG_TAIL_GROWTH
        long_tail = len(self._lines) > LONG_TAIL_FACTOR * self._commit_after_lines
        self._parse_at = len(self._lines) + (grown if long_tail else 1)

    def _emit(self, block: _Block | None, lines: list[str]) -> None:
        if block is not None and block.start == 0 and self._fence is not None:
            code = block.token  # the fence whose first lines were emitted: it closed
            self._out.append(CodeSlice(code.content.rstrip(), _lexer(code), first=False, last=True))
            self._fence = None  # rstrip: as rich's code blocks do
        elif text := "".join(lines):
            self._out.append(MarkdownBlock(text, self._continues_list))
        self._continues_list = False

    def _cut_list(self, block: _Block, lines: list[str], offset: int) -> None:
        if len(block.items) < 2 or block.items[-1].map is None:
            return
        cut = block.items[-1].map[0] - offset
        if cut >= self._commit_after_lines and _may_start_a_part(block):
            self._out.append(MarkdownBlock("".join(lines[:cut]), self._continues_list))
            self._lines, self._continues_list = lines[cut:], True

    def _slice_fence(self, block: _Block, lines: list[str], offset: int) -> None:
        code = block.token.content.split("\n")[:-1]  # its lines, without the fence's indent
        if len(code) <= self._commit_after_lines:
            return
        # Keep the last non-blank line back, so the last slice is never empty and trailing blank
        # lines, which a closed fence drops, are never printed. Prefer cutting before an
        # unindented line: it is less likely to split a multi-line string or comment.
        last_text = max((i for i, line in enumerate(code) if not _is_blank(line)), default=0)
        starts = [k for k in range(len(code) // 2, last_text + 1) if code[k][:1] not in " \t"]
        cut = starts[-1] if starts else last_text
        if cut == 0:
            return
        opening, first = block.start - offset, self._fence is None
        if first:
            self._emit(None, lines[:opening])  # link reference definitions before the fence
            self._fence = lines[opening]
        self._out.append(CodeSlice("\n".join(code[:cut]), _lexer(block.token), first, last=False))
        self._lines = lines[opening + 1 + cut :]


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # imported on first use, like rich.markdown (which needs it)

    # Rich's block rules (CommonMark and tables); inline markup never moves a block boundary.
    return MarkdownIt().enable("table").disable("inline")


def _blocks(source: str) -> list[_Block]:
    # markdown-it also breaks lines at a lone CR; the stream's lines are split at LF only.
    blocks: list[_Block] = []
    for token in _parser().parse(source.replace("\r", " ")):
        if token.level == 0 and token.map is not None:
            blocks.append(_Block(token))
        elif token.level == 1 and token.type == "list_item_open" and blocks:
            blocks[-1].items.append(token)
    return blocks


def _closed(block: _Block, line_count: int) -> bool:
    """Whether no later line can add to this block, the tail's last."""
    token = block.token
    if token.type == "fence":  # closed once its code is shorter than its lines minus the fences
        return block.end - block.start - 1 > token.content.count("\n")
    # Other blocks end at a blank line, which a list or an open HTML comment includes, and
    # indented code goes on past.
    return token.type in ("heading_open", "hr") or (block.end < line_count and token.type != "code_block")


def _may_start_a_part(block: _Block) -> bool:
    """Whether a list's last item may start a part of it printed on its own."""
    if block.token.type == "bullet_list_open":
        return True
    # Rich numbers items from the list's start, whatever they say: the part must start at the
    # number the item gets in the whole list. And it sizes the number column by the item count:
    # from item 10 on, a part keeps the same width as the whole list (for lists of 9 to 98 items).
    number = int(block.items[-1].info)
    return number >= 10 and number == int(block.token.attrs.get("start", 1)) + len(block.items) - 1


def _is_blank(line: str) -> bool:
    return not line.strip(" \t\n")  # as markdown counts it: other spaces are text


def _lexer(fence: Token) -> str:
    return fence.info.partition(" ")[0] or "text"  # as rich's markdown names it
