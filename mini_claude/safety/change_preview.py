"""What a file write would change, for its permission question: a diff for an edit or a replaced
file, the first lines of a new one. The file tools build it (they hold the content) just before
they ask; the UI only lays it out. It is made of visible text already (escape codes and other
control characters written out). A long change is shown in part with a count, the rest kept for
the answer `v`: it is always the change that is shown, never unchanged content in its place.
A line that changes is never cut (a payload after 400 spaces would be out of sight): it wraps
whole, a long run of characters drawn as nothing in it shown as one marker with its count."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

from mini_claude.core.untrusted import (
    DRAWN_AS_NOTHING_CLASS,
    marked_text,
    must_write_out,
    unicode_pattern,
    visible_text,
)

CONTEXT_LINES = 3  # unchanged lines shown around each change
MAX_PREVIEW_LINES = 60  # diff or content lines kept; the rest is counted
MAX_CONTEXT_LINE_CHARS = 400  # of an unchanged line around a change; the rest of it is counted
BLANK_RUN_MIN_CHARS = 40  # a run of spaces and tabs this long is shown as "⟨N blanks⟩"
INVISIBLE_RUN_MIN = 8  # a run holding any other character drawn as nothing: "⟨N × \u2800⟩"
NEW_FILE_HEAD_LINES = 20  # of a new file's content
COLLAPSED_LINES = 6  # of a change made without a question, kept under its tool line
DIFF_MARKS = {"added": "+ ", "removed": "- "}
MARKER_CHARS_NAMED = 4  # of a mixed run, the marker names this many of its characters
BYTES_PER_KB = 1024
_BLANK_NAMES = {" ": "space", "\t": "tab"}
# A run for the marker: characters drawn as nothing (untrusted's one definition), and those the
# gate writes out anyway (private use, unassigned), in any mix.
_RUN = rf"[{DRAWN_AS_NOTHING_CLASS}\p{{Co}}\p{{Cn}}\p{{Cs}}]{{{INVISIBLE_RUN_MIN},}}"

LineKind = Literal["context", "added", "removed", "hunk", "content"]


@dataclass(frozen=True)
class PreviewLine:
    kind: LineKind
    text: str  # visible, tabs kept; without a +/- mark (the kind says which)
    number: int = 0  # for "content": its line number in the file


@dataclass(frozen=True)
class ChangePreview:
    summary: str  # one line: "new file: 12 lines, 340 bytes", "removes 1 line, adds 2"
    lines: tuple[PreviewLine, ...] = ()  # shown in the question
    more: tuple[PreviewLine, ...] = ()  # the rest of the diff or the content, for the answer `v`

    @property
    def omitted(self) -> int:
        """Lines left out of the question (past MAX_PREVIEW_LINES or NEW_FILE_HEAD_LINES)."""
        return len(self.more)


def edit_preview(before: str, after: str) -> ChangePreview:
    """The change from `before` to `after` as a unified diff with CONTEXT_LINES of context."""
    lines, removed, added = _diff(_lines(before), _lines(after))
    return _capped(f"{_count(removed, 'removes')}, {_count(added, 'adds')}", lines, MAX_PREVIEW_LINES)


def collapsed_diff(before: str, after: str, max_lines: int = COLLAPSED_LINES) -> tuple[str, ...]:
    """The change as the user keeps it on screen after it was made without a question: its first
    changed lines (`+ added`, `- removed`) and how many more."""
    lines, _, _ = _diff(_lines(before), _lines(after))
    changed = [f"{DIFF_MARKS[line.kind]}{line.text}" for line in lines if line.kind in DIFF_MARKS]
    if len(changed) <= max_lines + 1:
        return tuple(changed)
    return (*changed[:max_lines], f"… +{len(changed) - max_lines:,} changed lines")


def new_file_preview(content: str) -> ChangePreview:
    return _content_preview(f"new file: {_size(content)}", content)


def replace_preview(before: str | None, after: str, *, why_no_diff: str = "") -> ChangePreview:
    """A write over an existing file: the diff, however long (capped as an edit's is); the new
    content only when `before` is None, the old content unreadable (`why_no_diff` says why)."""
    if before is None:
        # The reason's first clause: "x.bin looks like a binary file".
        why = re.split(r";|, so |\. ", _first_line(why_no_diff))[0].rstrip(".")
        return _content_preview(f"replaces the file ({visible_text(why)}) with {_size(after)}", after)
    lines, removed, added = _diff(_lines(before), _lines(after))
    summary = f"replaces its content: {_count(removed, 'removes')}, {_count(added, 'adds')}"
    if not lines:
        return ChangePreview(f"replaces its content with the same text ({_size(after)})")
    return _capped(summary, lines, MAX_PREVIEW_LINES)


def unavailable(reason: str) -> ChangePreview:
    """No preview, and why (the reason's first sentence): e.g. the text to replace is not there."""
    first = _first_line(reason).split(". ")[0].rstrip(".") or "unknown reason"
    return ChangePreview(f"no preview: {visible_text(first)}")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _content_preview(summary: str, content: str) -> ChangePreview:
    if "\0" in content:
        return ChangePreview(summary + " (binary data, not shown)")
    lines = _lines(content)
    shown = [PreviewLine("content", _changed(line), number) for number, line in enumerate(lines, 1)]
    return _capped(summary, shown, NEW_FILE_HEAD_LINES)


def _capped(summary: str, lines: list[PreviewLine], limit: int) -> ChangePreview:
    return ChangePreview(summary, tuple(lines[:limit]), tuple(lines[limit:]))


def _diff(before: list[str], after: list[str]) -> tuple[list[PreviewLine], int, int]:
    """Hunks of the diff, and how many lines it removes and adds. The common head and tail are
    cut off first (linear), so an edit in a large file costs a diff of its changed part only."""
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(after)) - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    start = max(0, head - CONTEXT_LINES)
    keep_tail = max(0, tail - CONTEXT_LINES)
    old, new = before[start : len(before) - keep_tail], after[start : len(after) - keep_tail]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    lines: list[PreviewLine] = []
    removed = added = 0
    for group in matcher.get_grouped_opcodes(CONTEXT_LINES):
        first, last = group[0], group[-1]
        old_span, new_span = last[2] - first[1], last[4] - first[3]
        header = f"@@ -{start + first[1] + 1},{old_span} +{start + first[3] + 1},{new_span} @@"
        lines.append(PreviewLine("hunk", header))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [PreviewLine("context", _unchanged(line)) for line in old[i1:i2]]
                continue
            lines += [PreviewLine("removed", _changed(line)) for line in old[i1:i2]]
            lines += [PreviewLine("added", _changed(line)) for line in new[j1:j2]]
            removed, added = removed + i2 - i1, added + j2 - j1
    return lines, removed, added


def _lines(text: str) -> list[str]:
    """Lines split at line breaks only (`\r\n` counting as one): a lone `\r` or a form feed stays
    in its line, to be written out, not taken for a line break."""
    lines = text.replace("\r\n", "\n").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _changed(line: str) -> str:
    """A line the write adds or removes, every character of it shown: a long run of characters
    drawn as nothing becomes a counted marker (`blank_runs_marked`)."""
    return blank_runs_marked(line, keep="\t")


def blank_runs_marked(line: str, keep: str = "") -> str:
    """`line` made visible with every character drawn as nothing marked (`marked_text`, `keep`
    kept), each run of them shown as one marker with its count: 40 or more spaces and tabs
    (`⟨400 blanks⟩`), or 8 or more holding any other (`⟨6,000 × \u2800⟩`,
    `⟨450 blanks: \u200b \u00a0⟩`), so that such a run cannot push what follows it out of
    sight, and a lone one (a variation selector between two letters) is written out. Also what
    a command's question shows."""
    if line.isascii() and line.isprintable() and " " * BLANK_RUN_MIN_CHARS not in line:
        return line  # the common case, at C speed
    shown: list[str] = []
    start = 0
    for run in unicode_pattern(_RUN).finditer(line):
        blanks = run.group()
        if len(blanks) < BLANK_RUN_MIN_CHARS and not blanks.strip(" \t"):
            continue  # a short run of spaces and tabs: shown as it is
        shown += [marked_text(line[start : run.start()], keep=keep), _marker(blanks)]
        start = run.end()
    shown.append(marked_text(line[start:], keep=keep))
    return "".join(shown)


def _marker(blanks: str) -> str:
    kinds = "".join(dict.fromkeys(blanks))
    if not kinds.strip(" \t"):
        noun = "tabs" if kinds == "\t" else "blanks"
        return f" ⟨{len(blanks):,} {noun}⟩ "
    if len(kinds) == 1:
        return f"⟨{len(blanks):,} × {named_blanks(kinds)}⟩"
    return f"⟨{len(blanks):,} blanks: {named_blanks(kinds)}⟩"


def named_blanks(kinds: str) -> str:
    """The characters `kinds` (each drawn as nothing) named so that they can be seen: `space`,
    `tab`, the rest written out (`\\xa0`, `\\u3000`, `\\u200b`); the first few, then `…`."""
    names = [_BLANK_NAMES.get(char) or _written_out(char) for char in kinds[:MARKER_CHARS_NAMED]]
    return " ".join(names) + (" …" if len(kinds) > MARKER_CHARS_NAMED else "")


def _written_out(char: str) -> str:
    # The gate shows spaces (U+00A0, U+3000) as they are: named, they must be written out too.
    return visible_text(char) if must_write_out(char) else char.encode("unicode_escape").decode("ascii")


def _unchanged(line: str) -> str:
    """A line of context: only its start matters, the rest is counted."""
    if len(line) > MAX_CONTEXT_LINE_CHARS:
        cut = len(line) - MAX_CONTEXT_LINE_CHARS
        line = line[:MAX_CONTEXT_LINE_CHARS] + f" … ({cut:,} more characters)"
    return _changed(line)


def _count(lines: int, verb: str) -> str:
    return f"{verb} {_plural(lines, 'line')}"


def _size(content: str) -> str:
    size = len(content.encode("utf-8", "surrogateescape"))
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    if not size:
        return "empty"
    shown = f"{size / BYTES_PER_KB:,.1f} KB" if size >= BYTES_PER_KB else _plural(size, "byte")
    return f"{_plural(lines, 'line')}, {shown}"


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"
