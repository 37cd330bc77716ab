"""How many terminal cells text takes, never counted short: the one width the permission question
folds and counts its rows by. A row counted too narrow wraps on the screen, and enough of them
(1,500 skin-tone modifiers, which rich counts as nothing and terminals draw two cells wide) make a
question taller than the screen that says it fits, scrolling its payload out of sight.

A character's width is the largest any common terminal gives it (xterm, tmux, VTE, pyte, and
rich, which prints): two cells for East Asian Wide and Fullwidth characters and the regional
indicators of flags, nothing for combining marks and joiners, one for all else. Characters are
counted one by one, never as a joined emoji: a terminal that draws 👍🏻 or 🇫🇷 as one glyph
takes fewer cells than counted, never more. Text reaches here made visible (`untrusted`):
controls and invisible characters are written out by then.
"""

from __future__ import annotations

import textwrap
import unicodedata
from functools import lru_cache

from rich.cells import get_character_cell_size

WIDE_CLASSES = ("W", "F")  # East Asian Width
REGIONAL_INDICATORS = range(0x1F1E6, 0x1F200)  # narrow by East Asian Width, drawn wide
ZERO_WIDTH_CATEGORIES = ("Mn", "Me")  # combining marks: drawn on the character before
JOINERS = "\u200c\u200d"
# Emoji presentation: some terminals draw the character before it two cells wide.
WIDENING_SELECTOR = "\ufe0f"


@lru_cache(maxsize=4096)
def char_cells(char: str) -> int:
    """The most cells a terminal draws `char` in (0, 1 or 2)."""
    if unicodedata.east_asian_width(char) in WIDE_CLASSES or ord(char) in REGIONAL_INDICATORS:
        return 2
    if char == WIDENING_SELECTOR:
        return 1
    if char in JOINERS or unicodedata.category(char) in ZERO_WIDTH_CATEGORIES:
        return 0
    return max(1, get_character_cell_size(char))  # rich's own table may know a newer wide one


def cells(text: str) -> int:
    """The cells `text` takes on one line (see `char_cells`)."""
    if text.isascii():
        return len(text)  # the common case; controls are written out before text gets here
    return sum(map(char_cells, text))


def fold(text: str, width: int) -> list[str]:
    """`text` cut into rows of at most `width` cells, every character kept, a combining mark or
    joiner kept in the row of the character before it (and never after a row's last cell)."""
    width = max(width, 2)  # a wide character must fit a row
    if text.isascii():
        return [text[start : start + width] for start in range(0, len(text), width)] or [""]
    rows: list[str] = []
    start = used = base = 0  # base: where the last character that takes cells is
    for index, char in enumerate(text):
        size = char_cells(char)
        if used + size > width:
            rows.append(text[start:index])
            start, used = index, 0
        elif not size and used == width and base > start:
            # A mark after a full row: some terminals (pyte) wrap before drawing it, so the
            # character it belongs on goes to the next row with it.
            rows.append(text[start:base])
            start, used = base, char_cells(text[base])
        if size:
            base = index
        used += size
    if start < len(text):
        rows.append(text[start:])
    return rows or [""]


def wrap_words(text: str, width: int) -> list[str]:
    """Our own words (a question, a note, a summary) wrapped at spaces into rows of at most
    `width` cells; a word too wide for a row is folded."""
    parts = textwrap.wrap(text, max(width, 1), break_on_hyphens=False) or [""]
    return [row for part in parts for row in (fold(part, width) if cells(part) > width else [part])]
