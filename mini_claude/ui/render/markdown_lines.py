"""What one line of markdown is, by the CommonMark rules the stream needs to find block boundaries:
headings, breaks, list items, code fences, raw HTML blocks, indentation.

Apart from markdown_stream.py, which decides when a block is finished; these are pure functions
of one line (or a fence and a line), so each rule can be read and checked on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
LIST_ITEM = re.compile(r"( {0,3})([-+*]|(\d{1,9})[.)])(?=[ \t]|$)")
_FENCE_OPEN = re.compile(r"( *)(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"( *)(`{3,}|~{3,})[ \t]*$")
# HTML blocks that may contain blank lines (CommonMark types 1-5) and what ends them.
_HTML_RAW = re.compile(
    r" {0,3}(<(?:script|pre|style|textarea)(?=[\s>]|$)|<!--|<\?|<![A-Za-z]|<!\[CDATA\[)", re.IGNORECASE
)
_HTML_RAW_END = {"<!--": "-->", "<?": "?>", "<![cdata[": "]]>"}


@dataclass(frozen=True)
class Fence:
    """An open code fence: what closes it, and how its code is shown."""

    char: str
    length: int
    indent: int
    lexer: str
    nested: bool  # inside a list item: part of the list block, never emitted on its own


def is_blank(line: str) -> bool:
    return not line.strip()


def indent_width(line: str) -> int:
    """The line's indentation in columns, a tab reaching the next multiple of 4."""
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def list_key(match: re.Match[str]) -> tuple[int, str]:
    """What items of one list share: the indent and the bullet (or the `.` / `)` after a number)."""
    marker = match.group(2)
    return len(match.group(1)), marker[-1] if match.group(3) else marker


def open_fence(line: str, *, nested: bool) -> Fence | None:
    """The fence this line opens, if any; `nested` (inside a list item) allows any indent."""
    match = _FENCE_OPEN.match(line.rstrip("\r\n"))
    if not match or (not nested and len(match.group(1)) > 3):
        return None
    marks, info = match.group(2), match.group(3).strip()
    if marks[0] == "`" and "`" in info:
        return None  # not a fence: inline code like ```x```
    lexer = info.split(maxsplit=1)[0] if info else "text"
    return Fence(marks[0], len(marks), len(match.group(1)), lexer, nested)


def closes_fence(fence: Fence, line: str) -> bool:
    match = _FENCE_CLOSE.match(line.rstrip("\r\n"))
    if not match or (not fence.nested and len(match.group(1)) > 3):
        return False
    marks = match.group(2)
    return marks[0] == fence.char and len(marks) >= fence.length


def html_raw_end(line: str) -> str | None:
    """For a line opening a raw HTML block that goes on past it: the text that will end it."""
    match = _HTML_RAW.match(line)
    if not match:
        return None
    start = match.group(1).lower()
    end = _HTML_RAW_END.get(start) or (">" if start.startswith("<!") else f"</{start[1:]}>")
    return None if end in line[match.end() :].lower() else end


def interrupts_paragraph(line: str) -> bool:
    if open_fence(line, nested=False) or HEADING.match(line) or _HTML_RAW.match(line):
        return True
    item = LIST_ITEM.match(line)
    # Only a non-empty bullet item or an ordered item starting at 1 may interrupt a paragraph.
    return bool(item and line[item.end() :].strip() and item.group(3) in (None, "1"))


def interrupts_list(line: str) -> bool:
    return bool(open_fence(line, nested=False) or HEADING.match(line))


def dedent_code(code: str, indent: int) -> str:
    """Remove a fence's own indentation from its lines, as markdown does."""
    if not indent:
        return code
    lines = code.split("\n")
    return "\n".join(line[min(indent, len(line) - len(line.lstrip(" "))) :] for line in lines)
