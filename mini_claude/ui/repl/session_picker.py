"""Choosing a saved session from a list (`-r` alone, `/resume`): type to filter, arrow keys to
move, Enter to resume, Esc or Ctrl+C to cancel. One line per session (when it was last used, its
message count, its first message), fitted to the terminal's width; only the rows on screen are
drawn, so hundreds of sessions cost nothing to scroll through."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field

from mini_claude.core.untrusted import visible_text
from mini_claude.sessions.catalog import SessionSummary
from mini_claude.ui.questions.choose_one import run_list

MAX_ROWS = 12  # sessions shown at once; fewer on a short terminal
MIN_ROWS = 3
MIN_WIDTH = 20
CHROME_ROWS = 4  # title, filter, column heads, footer
WHEN_WIDTH = 6  # "59m", "23h", "13d", "Mar 3", "2023"
COUNT_WIDTH = 5
ID_MIN_WIDTH = 80  # terminals this wide also show the start of each id
ID_SHOWN = 8
PREVIEW_CHARS = 1000  # of a first message: more than any row shows (it may be kilobytes long)
UNUSABLE_HINT = " (see mini-claude sessions list)"
HINTS = ("↑↓ move · Enter resume · Esc cancel", "↑↓ Enter Esc")


def last_used_label(timestamp: float, now: float) -> str:
    """`now`, `5m`, `3h`, `6d`, then the date: short enough for a 40-column row."""
    seconds = max(0.0, now - timestamp)
    if seconds < 60:
        return "now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86_400:
        return f"{int(seconds // 3600)}h"
    if seconds < 14 * 86_400:
        return f"{int(seconds // 86_400)}d"
    day = dt.datetime.fromtimestamp(timestamp)
    if day.year == dt.datetime.fromtimestamp(now).year:
        return f"{day:%b} {day.day}"
    return str(day.year)


def one_line(text: str) -> str:
    """Whitespace runs (line breaks too) folded to one space, then made visible (`\\x1b`)."""
    return visible_text(" ".join(text.split()))


@dataclass
class PickerState:
    """What the picker shows, apart from the terminal: the filter, the matches, the selection."""

    sessions: list[SessionSummary]
    matches: list[SessionSummary] = field(default_factory=list)
    selected: int = 0
    top: int = 0  # the first match on screen

    def __post_init__(self) -> None:
        self._texts = [one_line(s.title).casefold() for s in self.sessions]
        self.set_filter("")

    def set_filter(self, text: str) -> None:
        words = text.casefold().split()
        self.matches = [
            summary
            for summary, first in zip(self.sessions, self._texts, strict=True)
            if all(word in first or summary.id.startswith(word) for word in words)
        ]
        self.selected = self.top = 0

    def move(self, delta: int, rows: int) -> None:
        if self.matches:
            self.selected = min(max(self.selected + delta, 0), len(self.matches) - 1)
            self.top = min(max(self.top, self.selected - rows + 1), self.selected)

    def chosen(self) -> SessionSummary | None:
        return self.matches[self.selected] if self.matches else None


def row_text(summary: SessionSummary, width: int, now: float) -> str:
    """One session as one line of at most `width` cells."""
    from prompt_toolkit.utils import get_cwidth

    count = "?" if summary.message_count is None else str(summary.message_count)
    row = f"{last_used_label(summary.last_used, now):>{WHEN_WIDTH}}{count:>{COUNT_WIDTH}}  "
    if width >= ID_MIN_WIDTH:
        row += summary.id[:ID_SHOWN] + "  "
    first = one_line(summary.title[:PREVIEW_CHARS]) or "(no message)"
    room = width - len(row)
    if get_cwidth(first) <= room:
        return row + first
    kept, used = [], 0
    for char in first:  # wide characters take two cells
        used += get_cwidth(char)
        if used > room - 1:
            break
        kept.append(char)
    return row + "".join(kept) + "…"


def head_text(width: int) -> str:
    head = f"{'when':>{WHEN_WIDTH}}{'msgs':>{COUNT_WIDTH}}  "
    return head + ("id" + " " * (ID_SHOWN) if width >= ID_MIN_WIDTH else "") + "first message"


def pick_session(sessions: list[SessionSummary], *, unusable: int = 0) -> SessionSummary | None:
    """The session the user chose, or None when they cancelled. `unusable`: sessions left out of
    the list because they cannot be resumed (said in the footer)."""
    from prompt_toolkit.application import get_app
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.layout import BufferControl, FormattedTextControl, HSplit, Layout, Window
    from prompt_toolkit.layout.dimension import Dimension
    from prompt_toolkit.styles import Style

    state = PickerState(sessions)
    now = time.time()
    marker = 2  # "› " before each row

    def size() -> tuple[int, int]:
        screen = get_app().output.get_size()
        return max(screen.columns - 1, MIN_WIDTH), max(MIN_ROWS, min(MAX_ROWS, screen.rows - CHROME_ROWS - 1))

    def title() -> StyleAndTextTuples:
        width, _ = size()
        text = f"Resume a session ({len(sessions)})"
        hint = next((h for h in HINTS if len(text) + 2 + len(h) <= width), "")
        return [("bold", text), ("", "  "), ("class:dim", hint)]

    def rows() -> StyleAndTextTuples:
        width, height = size()
        state.move(0, height)  # keeps the selection on screen after a resize
        lines: StyleAndTextTuples = [("class:dim", " " * marker + head_text(width - marker) + "\n")]
        if not state.matches:
            return [*lines, ("class:dim", "  No session matches the filter.")]
        for index in range(state.top, min(state.top + height, len(state.matches))):
            text = row_text(state.matches[index], width - marker, now)
            chosen = index == state.selected
            lines.append(("reverse" if chosen else "", ("› " if chosen else "  ") + text + "\n"))
        return lines

    def footer() -> StyleAndTextTuples:
        width, _ = size()
        position = f"{state.selected + 1}/{len(state.matches)}" if state.matches else ""
        notes = [f"{unusable} cannot be resumed{hint}" for hint in (UNUSABLE_HINT, "")] if unusable else [""]
        lines = [" · ".join(part for part in (position, note) if part) for note in notes]
        return [("class:dim", "  " + next((line for line in lines if len(line) + 2 <= width), lines[-1]))]

    def rows_height() -> Dimension:
        return Dimension.exact(1 + max(1, min(len(state.matches), size()[1])))

    search = Buffer(multiline=False, on_text_changed=lambda buffer: state.set_filter(buffer.text))
    layout = Layout(
        HSplit(
            [
                Window(FormattedTextControl(title), height=1),
                Window(BufferControl(search), height=1, get_line_prefix=lambda *_: [("bold", "Filter: ")]),
                Window(FormattedTextControl(rows), height=rows_height),
                Window(FormattedTextControl(footer), height=1),
            ]
        ),
        focused_element=search,
    )
    return run_list(
        layout,
        lambda delta: state.move(delta, size()[1]),
        state.chosen,
        page=lambda: size()[1],
        style=Style([("dim", "#888888")]),
    )
