"""What a terminal makes of printed text, independent of mini-claude's own measure: the width a
terminal draws each character at (the larger of wcwidth's, as pyte, xterm and tmux use, and
rich's) and the screen a session leaves, by a real VT emulator (pyte)."""

from __future__ import annotations

import pyte
from rich.cells import get_character_cell_size
from wcwidth import wcwidth


def drawn_width(text: str) -> int:
    """Cells `text` takes on a terminal that draws character by character (xterm, tmux, pyte)."""
    return sum(max(wcwidth(char), get_character_cell_size(char), 0) for char in text)


def screen_after(printed: str, columns: int, rows: int) -> list[str]:
    """The lines on a `columns` × `rows` screen once `printed` (escape codes and all) is drawn."""
    screen = pyte.Screen(columns, rows)
    pyte.Stream(screen).feed(printed)
    return [line.rstrip() for line in screen.display]


def rows_drawn(lines: list[str], columns: int) -> int:
    """Screen rows `lines` take when printed one after another: a line too wide wraps."""
    screen = pyte.Screen(columns, len(lines) * 4 + 4)
    stream = pyte.Stream(screen)
    for line in lines:
        stream.feed(line + "\r\n")
    return screen.cursor.y
