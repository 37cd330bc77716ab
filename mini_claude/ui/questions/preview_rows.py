"""A write's preview (`change_preview.ChangePreview`) as rows of its permission question: a
summary, then the diff (`+`/`-` marked and coloured, the mark staying where colour goes) or the
new content's numbered first lines, with a count of the rest, which the answer `v` shows. Every
row fits the width by the question's own measure (`ui/questions/cells.py`): long lines wrap, never get cut."""

from __future__ import annotations

from mini_claude.core.untrusted import visible_text
from mini_claude.safety.change_preview import ChangePreview, PreviewLine
from mini_claude.ui.questions.cells import fold, wrap_words

VIEW_ALL_KEY = "v"  # the answer that shows all of a question (permission_prompt reads it)

TAB_SIZE = 8
PREVIEW_INDENT = "  "
DIFF_MARKS = {"added": "+ ", "removed": "- ", "context": "  ", "hunk": ""}
STYLES = {"added": "green", "removed": "red", "hunk": "cyan", "context": "", "content": ""}
SUMMARY_STYLE = "bold"


# One row of the question: its gutter (dim), its text and the text's style.
PreviewRow = tuple[str, str, str]


def preview_rows(preview: ChangePreview, width: int, *, everything: bool = False) -> list[PreviewRow]:
    """The rows for `preview` on a `width`-wide screen; `everything`: the lines left out too."""
    summary = wrap_words(visible_text(preview.summary), width - len(PREVIEW_INDENT))
    rows = [(PREVIEW_INDENT, part, SUMMARY_STYLE) for part in summary]
    lines = preview.lines + preview.more if everything else preview.lines
    digits = len(str(max((line.number for line in lines), default=0)))
    for line in lines:
        rows += _line_rows(line, width, digits)
    if preview.omitted and not everything:
        noun = "line" if preview.omitted == 1 else "lines"
        note = f"… {preview.omitted:,} more {noun} not shown: answer {VIEW_ALL_KEY} to see them"
        rows += [(PREVIEW_INDENT, part, "dim") for part in wrap_words(note, width - len(PREVIEW_INDENT))]
    return rows


def _line_rows(line: PreviewLine, width: int, digits: int) -> list[PreviewRow]:
    if line.kind == "content":
        first_gutter = f"{PREVIEW_INDENT}{line.number:>{digits}} │ "
        later_gutter = " " * len(first_gutter)
    else:
        first_gutter = PREVIEW_INDENT + DIFF_MARKS[line.kind]
        later_gutter = PREVIEW_INDENT + (DIFF_MARKS[line.kind] if line.kind != "hunk" else "")
    text = visible_text(line.text, keep="\t").expandtabs(TAB_SIZE)  # the gate, here too
    parts = fold(text, width - len(first_gutter))
    style = STYLES[line.kind]
    return [(first_gutter if index == 0 else later_gutter, part, style) for index, part in enumerate(parts)]
