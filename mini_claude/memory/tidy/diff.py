"""A tidy's proposal as text for people: a line per change, and a unified diff per memory file.

The model wrote most of it, so every line comes out made visible (`untrusted.visible_text`): an
escape code in a reason or a memory cannot reach the terminal, a line break cannot fake a line.
A diff is shown whole, however long (what the user approves is what they saw): nothing a change
writes is left out, and what could push a line out of sight is drawn as one counted marker (a
run of blank lines, a long run of blanks within a line).
"""

from __future__ import annotations

import difflib

from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import visible_text
from mini_claude.memory.tidy.proposal import FileChange, Proposal
from mini_claude.safety.change_preview import blank_runs_marked

DIFF_CONTEXT_LINES = 3
BLANK_RUN_MIN_LINES = 3  # this many blank lines in a row, all added (or removed, or kept): one line
LABELS = {"create": "created", "change": "changed", "delete": "deleted"}
NO_FILE = "/dev/null"


def change_line(change: FileChange) -> str:
    """`changed  feedback_tests.md — the reason`."""
    return f"{LABELS[change.action]:<8} {visible_path(change.file_name)} — {visible_text(change.reason)}"


def summary_lines(proposal: Proposal) -> list[str]:
    """What the tidy proposes, what it left out and why, and what it did not review."""
    lines = [visible_text(note) for note in proposal.notes]
    count = len(proposal.changes)
    if count:
        noun = "change" if count == 1 else "changes"
        lines.append(f"Tidy proposes {count} {noun} (after reviewing {proposal.reviewed:,} memories):")
        lines.extend("  " + change_line(change) for change in proposal.changes)
    else:
        lines.append(f"Tidy proposes no changes (after reviewing {proposal.reviewed:,} memories).")
    if proposal.dropped:
        count = len(proposal.dropped)
        lines.append(f"Left out ({count}), not passing the checks:")
        lines.extend("  " + visible_text(line) for line in proposal.dropped)
    return lines


def change_diff(change: FileChange) -> list[str]:
    """The unified diff of the file from before to after the change (made visible)."""
    shown = visible_path(change.file_name)
    old = change.old.text if change.old is not None else ""
    new = change.new_text or ""
    before = NO_FILE if change.action == "create" else f"a/{shown}"
    after = NO_FILE if change.action == "delete" else f"b/{shown}"
    lines = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), before, after, lineterm="", n=DIFF_CONTEXT_LINES
        )
    )
    if change.old is not None and not change.old.whole:
        lines.append(f"[… the file goes on: {safe_read.format_size(change.old.size)} in all]")
    return _blank_runs_counted([blank_runs_marked(line) for line in lines])


def _blank_runs_counted(lines: list[str]) -> list[str]:
    """Each run of BLANK_RUN_MIN_LINES or more blank lines with the same mark as one line saying
    how many: 300 added blank lines cannot push the line after them out of sight."""
    shown: list[str] = []
    start = 0
    while start < len(lines):
        end = start
        mark = lines[start][:1]
        while (
            end < len(lines)
            and mark
            and mark in "+- "
            and lines[end][:1] == mark
            and not lines[end][1:].strip()
        ):
            end += 1
        if end - start >= BLANK_RUN_MIN_LINES:
            shown.append(f"{mark}⟨{end - start:,} blank lines⟩")
            start = end
        else:
            shown.append(lines[start])
            start += 1
    return shown
