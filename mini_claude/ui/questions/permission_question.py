"""What a permission question shows: the whole target, laid out so that no line of it can hide
and the question fits the screen. Reading the answer is the REPL's business (`ui/repl/repl.py`).

A short one-line target sits in the question itself. Anything else (several lines, or too long
for one screen line) goes below it: lines numbered, long lines wrapped rather than cut, a run
of blank lines shown as one row with its count (40 newlines cannot push a payload out of sight).
When even that is taller than the screen allows, the first and last rows are shown with a row
saying which lines are left out, and the answer `v` shows all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import islice

from mini_claude.core.untrusted import visible_text
from mini_claude.safety.permissions import PermissionRequest
from mini_claude.ui.questions.cells import cells, fold, wrap_words
from mini_claude.ui.questions.preview_rows import VIEW_ALL_KEY, preview_rows
from mini_claude.ui.questions.target_lines import BlankLines, Item, TargetLine, TargetText

# Screen rows the question leaves free besides its target: its own first line, the answer line
# and the line the user typed before (so the question is seen in context).
RESERVED_ROWS = 3
MIN_TARGET_ROWS = 6  # on a tiny screen, still this many rows of the target
MIN_PREVIEW_ROWS = 4  # and of a write's preview
LINE_MARK, MORE_MARK = "│", "┆"  # a line of the target; a row that stands for lines
SINGLE_LINE_INDENT = "  "
# A line longer than twice this (or than two screenfuls) is laid out as a screenful of each of
# its ends and a count of the characters between: no line costs more work than the screen shows.
MIN_SLICE_CHARS = 10_000
VERBS = {"read": "read", "write": "write to", "shell": "run", "tool": "run with", "fetch": "fetch"}
NOUNS = {"shell": "command", "tool": "input", "fetch": "address"}  # what the target is (else a path)


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
class _TargetRow:
    row: Row
    first_line: int  # which lines of the target this row shows (1-based; a blank run spans several)
    last_line: int
    cut: int = 0  # a row standing for this many characters of a long line not laid out


def question_view(
    request: PermissionRequest, width: int, height: int, *, everything: bool = False
) -> QuestionView:
    """The question for `request` on a `width` × `height` screen; `everything`: no row left out
    (what the answer `v` shows, however tall). A write's preview of its change comes below the
    target, in the room the target leaves."""
    width = max(width, 20)
    # What "always" would do (the rule it saves), on rows of its own just above the keys.
    always = (
        [] if request.always is None else wrap_words(f"a = always: {visible_text(request.always)}", width)
    )
    # A sub-agent's question says whose it is, above it.
    asker = (
        [] if request.agent is None else wrap_words(f"{visible_text(request.agent)} (sub-agent) asks:", width)
    )
    room = height - len(always) - len(asker)
    view = _with_always(_question_view(request, width, room, everything=everything), always)
    return replace(view, rows=[*(Row("", row, "bold") for row in asker), *view.rows])


def _with_always(view: QuestionView, always: list[str]) -> QuestionView:
    return replace(view, rows=[*view.rows, *(Row("", row, "dim") for row in always)])


def _question_view(request: PermissionRequest, width: int, height: int, *, everything: bool) -> QuestionView:
    view = _target_view(request, width, height, everything=everything)
    if request.preview is None:
        return view
    rows = [Row(*row) for row in preview_rows(request.preview, width, everything=everything)]
    view = replace(view, hidden_change_lines=0 if everything else request.preview.omitted)
    room = max(MIN_PREVIEW_ROWS, height - RESERVED_ROWS - len(view.rows))
    if everything or len(rows) <= room:
        return replace(view, rows=view.rows + rows)
    # The note's rows are counted first, with the longest number it can hold.
    note_rows = len(wrap_words(_change_note(len(rows)), width - len(SINGLE_LINE_INDENT)))
    kept_rows = max(1, room - note_rows)
    hidden = len(rows) - kept_rows
    note = [
        Row(SINGLE_LINE_INDENT, part, "dim")
        for part in wrap_words(_change_note(hidden), width - len(SINGLE_LINE_INDENT))
    ]
    # Its first and last rows, as for a long command: a payload at the end of a long line (or
    # of the diff) stays on screen.
    tail = kept_rows // 2
    head = kept_rows - tail
    kept = [*rows[:head], *note, *rows[len(rows) - tail :]] if tail else [*rows[:head], *note]
    return replace(view, rows=[*view.rows, *kept], hidden_preview_rows=hidden)


def _change_note(hidden: int) -> str:
    return f"… {hidden:,} more rows of the change: answer {VIEW_ALL_KEY} to see all of it"


def _target_view(request: PermissionRequest, width: int, height: int, *, everything: bool) -> QuestionView:
    verb = VERBS.get(request.action, request.action)
    reason = visible_text(request.reason)
    noun = NOUNS.get(request.action, "path")
    target = TargetText(request.target)
    count = target.count
    counted = f"this {count}-line {noun}" if count > 1 else f"this {noun}"
    header = [
        Row("", part) for part in wrap_words(f"Allow {request.tool} to {verb} {counted}? ({reason})", width)
    ]
    room = max(MIN_TARGET_ROWS, height - RESERVED_ROWS - len(header) + 1)
    # Only a screenful of each end of a very long line is laid out; `v` lays out all of it.
    target.slice_chars = None if everything else max(MIN_SLICE_CHARS, room * width)
    if count == 1:
        [line] = target.forward()
        if isinstance(line, TargetLine) and not line.cut_chars:
            question = f"Allow {request.tool} to {verb} {line.text}? ({reason})"
            if cells(question) <= width:
                return QuestionView([Row("", question)], 0)
    layout = _Layout(count, width)
    ahead = list(islice(layout.rows(target.forward()), None if everything else room + 1))
    if everything or len(ahead) <= room:
        return QuestionView(header + [r.row for r in ahead], _cut_lines(ahead))
    gutter = layout.gutter("", MORE_MARK) if count > 1 else SINGLE_LINE_INDENT
    # The note's rows are counted first, with the longest numbers it can hold.
    longest = _note(count, count, len(request.target), len(request.target), noun, single=count == 1)
    note_rows = len(wrap_words(longest, width - len(gutter)))
    tail = (room - note_rows) // 2
    head = max(1, room - note_rows - tail)
    behind = list(islice(layout.rows(target.backward(), reverse=True), tail + 1))
    first_hidden = ahead[head]
    # Unless all that is left out is part of one line, the rows after the note start a line: a
    # wrapped line's last rows alone would show a piece of a line the note says is left out.
    while (
        tail
        and behind[tail - 1].first_line == behind[tail].last_line
        and behind[tail - 1].first_line != first_hidden.first_line
    ):
        tail -= 1
    first, last = first_hidden.first_line, behind[tail].last_line
    shown = ahead[:head] + behind[:tail][::-1]
    hidden_rows = hidden_cut = 0
    if count == 1:  # one line: its rows are all known (at most a screenful of each end)
        body = list(layout.rows(target.forward()))
        hidden = body[head : len(body) - tail]
        hidden_cut = sum(r.cut for r in hidden)
        hidden_rows = len(hidden) - sum(1 for r in hidden if r.cut)
    note = _note(first, last, hidden_rows, hidden_cut, noun, single=count == 1)
    marker = [Row(gutter, part) for part in wrap_words(note, width - len(gutter))]
    rows = [r.row for r in ahead[:head]] + marker + [r.row for r in behind[:tail][::-1]]
    cut_elsewhere = [r for r in shown if not first <= r.first_line <= last]
    return QuestionView(header + rows, last - first + 1 + _cut_lines(cut_elsewhere))


def _note(first: int, last: int, hidden_rows: int, cut: int, noun: str, *, single: bool) -> str:
    """The row standing for what is left out, and how to see it."""
    if single:
        more = f" and {cut:,} more characters" if cut else ""
        return f"… {hidden_rows:,} more rows{more} of it: answer {VIEW_ALL_KEY} to see all of it"
    if first == last:
        return f"… part of line {first} not shown: answer {VIEW_ALL_KEY} to see the whole {noun}"
    return f"… lines {first}–{last} not shown: answer {VIEW_ALL_KEY} to see the whole {noun}"


def _cut_lines(rows: list[_TargetRow]) -> int:
    """Lines shown in part, their middle not laid out (only when a long line folds into few rows)."""
    return len({r.first_line for r in rows if r.cut})


class _Layout:
    """Items of the target (`target_lines`) as rows: numbered when there are several lines,
    long lines folded (never cut), a blank run one row with its count."""

    def __init__(self, count: int, width: int) -> None:
        self.single = count == 1
        self.digits = len(str(count))
        self.room = width - (len(SINGLE_LINE_INDENT) if self.single else len(self.gutter("", LINE_MARK)))

    def gutter(self, label: str, mark: str) -> str:
        return f"{label:>{self.digits}} {mark} "

    def rows(self, items: Iterator[Item], *, reverse: bool = False) -> Iterator[_TargetRow]:
        for item in items:
            rows = self._item_rows(item)
            yield from reversed(rows) if reverse else rows

    def _item_rows(self, item: Item) -> list[_TargetRow]:
        number = item.first
        if isinstance(item, BlankLines):
            gutter = self.gutter("", MORE_MARK)
            return [
                _TargetRow(Row(gutter, part), item.first, item.last)
                for part in wrap_words(item.note, self.room)
            ]
        line_gutter = SINGLE_LINE_INDENT if self.single else self.gutter("", LINE_MARK)
        rows = [_TargetRow(Row(line_gutter, part), number, number) for part in fold(item.text, self.room)]
        if not self.single:
            rows[0] = replace(rows[0], row=Row(self.gutter(str(number), LINE_MARK), rows[0].row.text))
        if item.cut_chars:
            gutter = SINGLE_LINE_INDENT if self.single else self.gutter("", MORE_MARK)
            what = "of it" if self.single else f"of line {number}"
            note = f"… {item.cut_chars:,} characters {what} not laid out: answer {VIEW_ALL_KEY} to see them"
            rows += [
                _TargetRow(Row(gutter, part), number, number, item.cut_chars)
                for part in wrap_words(note, self.room)
            ]
            rows += [
                _TargetRow(Row(line_gutter, part), number, number) for part in fold(item.end_text, self.room)
            ]
        return rows
