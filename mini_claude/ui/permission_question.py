"""What a permission question shows: the whole target, laid out so that no line of it can hide
and the question fits the screen. Reading the answer is the REPL's business (`ui/repl.py`).

A short one-line target sits in the question itself. Anything else (several lines, or too long
for one screen line) goes below it: lines numbered, long lines wrapped rather than cut, a run
of blank lines shown as one row with its count (40 newlines cannot push a payload out of sight).
When even that is taller than the screen allows, the first and last rows are shown with a row
saying which lines are left out, and the answer `v` shows all of them.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, replace

from rich.cells import cell_len, chop_cells

from mini_claude.change_preview import blank_runs_marked
from mini_claude.permissions import PermissionRequest
from mini_claude.ui.preview_rows import VIEW_ALL_KEY, preview_rows
from mini_claude.untrusted import visible_text

# Screen rows the question leaves free besides its target: its own first line, the answer line
# and the line the user typed before (so the question is seen in context).
RESERVED_ROWS = 3
MIN_TARGET_ROWS = 6  # on a tiny screen, still this many rows of the target
MIN_PREVIEW_ROWS = 4  # and of a write's preview
BLANK_RUN_MIN_LINES = 2  # this many blank lines in a row are shown as one row with their count
TAB_SIZE = 8
LINE_MARK, MORE_MARK = "│", "┆"  # a line of the target; a row that stands for lines
SINGLE_LINE_INDENT = "  "
VERBS = {"read": "read", "write": "write to", "shell": "run"}


@dataclass(frozen=True)
class Row:
    gutter: str  # line number and mark (dim), or the indent
    text: str
    style: str = ""  # of the text: a preview's added and removed lines are coloured


@dataclass(frozen=True)
class QuestionView:
    rows: list[Row]  # each at most the screen's width
    hidden_lines: int  # lines of the target not shown in full; 0 when all of it is on screen
    hidden_preview_rows: int = 0  # rows of the change's preview left out
    hidden_change_lines: int = 0  # lines of the diff (or new content) the preview left out

    @property
    def can_show_more(self) -> bool:
        return bool(self.hidden_lines or self.hidden_preview_rows or self.hidden_change_lines)


@dataclass(frozen=True)
class _Line:
    text: str  # visible, tabs expanded, long blank runs marked
    blank: bool  # only spaces and tabs: nothing the shell would run


@dataclass(frozen=True)
class _TargetRow:
    row: Row
    first_line: int  # which lines of the target this row shows (1-based; a blank run spans several)
    last_line: int


def question_view(
    request: PermissionRequest, width: int, height: int, *, everything: bool = False
) -> QuestionView:
    """The question for `request` on a `width` × `height` screen; `everything`: no row left out
    (what the answer `v` shows, however tall). A write's preview of its change comes below the
    target, in the room the target leaves."""
    width = max(width, 20)
    view = _target_view(request, width, height, everything=everything)
    if request.preview is None:
        return view
    rows = [Row(*row) for row in preview_rows(request.preview, width, everything=everything)]
    view = replace(view, hidden_change_lines=0 if everything else request.preview.omitted)
    room = max(MIN_PREVIEW_ROWS, height - RESERVED_ROWS - len(view.rows))
    if everything or len(rows) <= room:
        return replace(view, rows=view.rows + rows)
    hidden = len(rows) - (room - 1)
    note = Row(
        SINGLE_LINE_INDENT,
        f"… {hidden} more rows of the change: answer {VIEW_ALL_KEY} to see all of it",
        "dim",
    )
    # Its first and last rows, as for a long command: a payload at the end of a long line (or
    # of the diff) stays on screen.
    tail = (room - 1) // 2
    head = room - 1 - tail
    kept = [*rows[:head], note, *rows[len(rows) - tail :]] if tail else [*rows[:head], note]
    return replace(view, rows=[*view.rows, *kept], hidden_preview_rows=hidden)


def _target_view(request: PermissionRequest, width: int, height: int, *, everything: bool) -> QuestionView:
    verb = VERBS.get(request.action, request.action)
    raw = request.target.split("\n")
    if len(raw) > 1 and raw[-1] == "":
        raw.pop()  # the line break that ends the last line, not a line of its own
    # The gate is here too; a long run of blanks in a line is one counted marker, as in a preview.
    lines = [
        _Line(blank_runs_marked(line, keep="\t").expandtabs(TAB_SIZE), not line.strip(" \t")) for line in raw
    ]
    reason = visible_text(request.reason)
    if len(lines) == 1:
        question = f"Allow {request.tool} to {verb} {lines[0].text}? ({reason})"
        if cell_len(question) <= width:
            return QuestionView([Row("", question)], 0)
    noun = "command" if request.action == "shell" else "path"
    counted = f"this {len(lines)}-line {noun}" if len(lines) > 1 else f"this {noun}"
    header = [Row("", part) for part in _wrap(f"Allow {request.tool} to {verb} {counted}? ({reason})", width)]
    body = _target_rows(lines, width)
    room = max(MIN_TARGET_ROWS, height - RESERVED_ROWS - len(header) + 1)
    if everything or len(body) <= room:
        return QuestionView(header + [r.row for r in body], 0)
    gutter = _gutter("", len(str(len(lines))), MORE_MARK) if len(lines) > 1 else SINGLE_LINE_INDENT
    # The note's rows are counted first, with the longest numbers it can hold.
    note_rows = len(
        _wrap(_note(len(lines), len(lines), len(body), noun, single=len(lines) == 1), width - len(gutter))
    )
    tail = (room - note_rows) // 2
    head = max(1, room - note_rows - tail)
    # Unless all that is left out is part of one line, the rows after the note start a line: a
    # wrapped line's last rows alone would show a piece of a line the note says is left out.
    while (
        tail
        and body[len(body) - tail].first_line == body[len(body) - tail - 1].last_line
        and body[len(body) - tail].first_line != body[head].first_line
    ):
        tail -= 1
    hidden = body[head : len(body) - tail]
    first, last = hidden[0].first_line, hidden[-1].last_line
    note = _note(first, last, len(hidden), noun, single=len(lines) == 1)
    marker = [Row(gutter, part) for part in _wrap(note, width - len(gutter))]
    shown = [r.row for r in body[:head]] + marker + [r.row for r in body[len(body) - tail :]]
    return QuestionView(header + shown, last - first + 1)


def _note(first: int, last: int, hidden_rows: int, noun: str, *, single: bool) -> str:
    """The row standing for what is left out, and how to see it."""
    if single:
        return f"… {hidden_rows} more rows of it: answer {VIEW_ALL_KEY} to see all of it"
    if first == last:
        return f"… part of line {first} not shown: answer {VIEW_ALL_KEY} to see the whole {noun}"
    return f"… lines {first}–{last} not shown: answer {VIEW_ALL_KEY} to see the whole {noun}"


def _target_rows(lines: list[_Line], width: int) -> list[_TargetRow]:
    if len(lines) == 1:
        indent = SINGLE_LINE_INDENT
        return [_TargetRow(Row(indent, part), 1, 1) for part in _fold(lines[0].text, width - len(indent))]
    digits = len(str(len(lines)))
    room = width - len(_gutter("", digits, LINE_MARK))
    rows: list[_TargetRow] = []
    number = 0
    while number < len(lines):
        run = _blank_run(lines, number)
        if run >= BLANK_RUN_MIN_LINES:
            note = f"({run} blank lines)"
            rows.append(_TargetRow(Row(_gutter("", digits, MORE_MARK), note), number + 1, number + run))
            number += run
            continue
        for index, part in enumerate(_fold(lines[number].text, room)):
            label = str(number + 1) if index == 0 else ""  # a wrapped row has no number of its own
            rows.append(_TargetRow(Row(_gutter(label, digits, LINE_MARK), part), number + 1, number + 1))
        number += 1
    return rows


def _blank_run(lines: list[_Line], start: int) -> int:
    """How many lines from `start` hold nothing the shell would run (spaces and tabs only)."""
    end = start
    while end < len(lines) and lines[end].blank:
        end += 1
    return end - start


def _gutter(label: str, digits: int, mark: str) -> str:
    return f"{label:>{digits}} {mark} "


def _wrap(text: str, width: int) -> list[str]:
    """Our own words (the question, a note) wrapped at spaces."""
    return textwrap.wrap(text, max(width, 1), break_on_hyphens=False) or [""]


def _fold(text: str, width: int) -> list[str]:
    """`text` cut into rows of at most `width` cells, every character kept (a command is not
    word-wrapped: that would drop the spaces where it breaks)."""
    return chop_cells(text, max(width, 1)) or [""]
