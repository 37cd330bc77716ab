"""Finding the `---` frontmatter block: where it opens and closes, in decoded text or raw bytes.

Apart from core/frontmatter/__init__.py so both of its readers share one scanner: `parse` runs it on text,
`read_header` on the bytes read so far (asking for more until it can tell). Fences and line ends
are ASCII, which UTF-8 never uses inside a multi-byte character, so the two always find the same
block.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, AnyStr, Literal, NamedTuple

BOM = "\ufeff"  # an optional byte order mark before the block, dropped by both readers
BOM_BYTES = BOM.encode("utf-8")

# The same patterns for text and for bytes: the two readers must find the same block.
_LINE_SRC = r"([^\r\n]*)(\r\n|\r|\n)?"
_BLANK_SRC = r"[ \t]*"
_FENCE_SRC = r"[ \t]*---[ \t]*"
_PATTERNS: dict[type, tuple[re.Pattern[Any], ...]] = {
    str: tuple(re.compile(src) for src in (_LINE_SRC, _BLANK_SRC, _FENCE_SRC)),
    bytes: tuple(re.compile(src.encode("ascii")) for src in (_LINE_SRC, _BLANK_SRC, _FENCE_SRC)),
}


class Block(NamedTuple):
    """Where the block is in the data scanned so far, or why that is not known."""

    # "none": no opening fence; "more": need more input to decide (only when not at EOF);
    # "unclosed": opening fence but no closing one before EOF; "closed": offsets below are valid.
    status: Literal["none", "more", "unclosed", "closed"]
    open_line: int = 0  # 1-based line number of the opening fence
    inner_start: int = 0  # offset just after the opening fence's line end
    inner_end: int = 0  # offset where the closing fence line starts
    block_end: int = 0  # offset just after the closing fence's line end, where the body starts


def _patterns(data: str | bytes) -> tuple[re.Pattern[Any], ...]:
    return _PATTERNS[bytes if isinstance(data, bytes) else str]  # isinstance: subclasses welcome


def scan_lines(data: AnyStr, start: int) -> Iterator[tuple[AnyStr, AnyStr | None, int, int]]:
    """Yield (content, line end or None, start offset, end offset) for each line from `start`."""
    line_pattern = _patterns(data)[0]
    pos = start
    while pos < len(data):
        m = line_pattern.match(data, pos)
        if m is None:  # never: every part of the line pattern may match nothing
            return
        yield m.group(1), m.group(2), pos, m.end()
        pos = m.end()


def locate_block(data: AnyStr, at_eof: bool) -> Block:
    """Find the frontmatter block in `data` (str without BOM, or raw bytes possibly with one)."""
    _, blank, fence = _patterns(data)
    start = len(BOM_BYTES) if isinstance(data, bytes) and data.startswith(BOM_BYTES) else 0
    line_no = 0
    opening: Block | None = None
    for content, line_end, line_start, end in scan_lines(data, start):
        line_no += 1
        if line_end is None and not at_eof:
            return Block("more")  # a partial line might still turn out to be a fence, or not
        if opening is None:
            if blank.fullmatch(content):
                continue
            if not fence.fullmatch(content):
                return Block("none")
            opening = Block("unclosed", open_line=line_no, inner_start=end)
        elif fence.fullmatch(content):
            return opening._replace(status="closed", inner_end=line_start, block_end=end)
    if not at_eof:
        return Block("more")
    return opening or Block("none")
