"""Editing, deleting and undoing, the same from the REPL (`/memory edit|rm NAME`, `/memory undo`)
and the shell (`mini-claude memory edit|rm NAME|undo`): which editor opens a memory, what the user
is told afterwards, what the questions say. The callers print the lines their own way."""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import marked_text, visible_text
from mini_claude.memory.scopes import SCOPE_NAMES, MemoryScopes
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.undo import NothingToUndo, Reverted, last_change, undo_last

DEFAULT_EDITORS = ("nano", "vi")


@dataclass
class EditOutcome:
    lines: list[str] = field(default_factory=list)  # what to tell the user, already made visible
    failed: bool = False  # no editor, it could not start, or it exited with an error


def find_editor() -> str | None:
    """$VISUAL, else $EDITOR, else the first of DEFAULT_EDITORS installed."""
    return (
        os.environ.get("VISUAL")
        or os.environ.get("EDITOR")
        or next((e for e in DEFAULT_EDITORS if shutil.which(e)), None)
    )


def edit_memory(store: MemoryStore, memory: MemoryFile) -> EditOutcome:
    """Open the memory's file in the editor and wait; then the index follows what changed.
    Raises MemoryStoreError when the index cannot be rebuilt."""
    outcome = EditOutcome()
    editor = find_editor()
    if editor is None:
        return EditOutcome(["No editor found: set $VISUAL or $EDITOR."], failed=True)
    before = _fingerprint(memory.path, store.root)
    try:
        status = subprocess.call([*shlex.split(editor), str(memory.path)])
    except (OSError, ValueError) as error:  # ValueError: shlex on unbalanced quotes
        reason = error.strerror if isinstance(error, OSError) else str(error)
        shown = visible_text(editor)
        return EditOutcome([f"Could not start {shown!r}: {reason}. Set $VISUAL or $EDITOR."], failed=True)
    name = visible_path(memory.file_name)
    if status != 0:
        outcome.lines.append(f"The editor exited with status {status}.")
        outcome.failed = True
    if before is not None and _fingerprint(memory.path, store.root) == before:
        outcome.lines.append(f"No changes to {name}.")
        return outcome
    store.rebuild_index()
    edited = next((m for m in store.scan() if m.file_name == memory.file_name), None)
    if edited is None:
        outcome.lines.append(f"{name} is gone; the index was updated.")
    elif edited.problem:
        problem = visible_text(edited.problem)
        outcome.lines.append(f"{name} is now broken: {problem}. It stays out of the index until fixed.")
    else:
        outcome.lines.append(f"Saved {name}; the index was updated.")
    return outcome


def delete_question(memory: MemoryFile) -> str:
    where = "" if memory.scope == "project" else f" from {SCOPE_NAMES[memory.scope]}"
    return f"Delete memory {marked_text(repr(memory.name))} ({visible_path(memory.file_name)}){where}?"


def deleted_line(memory: MemoryFile) -> str:
    return f"Deleted {visible_path(memory.file_name)}; the index was updated."


def undo_last_change(
    store: MemoryScopes | MemoryStore, confirm: Callable[[str], bool | None] | None
) -> tuple[bool, list[str]]:
    """Undo the last change to the memories (a tidy, a deletion, an update), asking first through
    `confirm` when given: (False when there was none or it failed, the lines to show)."""
    try:
        expected = None
        if confirm is not None:
            expected, what = last_change(store)
            if not confirm(f"Undo {visible_text(what)}?"):
                return True, ["Nothing was undone."]
        reverted = undo_last(store, expected)
    except NothingToUndo as error:
        return False, [visible_text(str(error))]
    except (MemoryStoreError, OSError) as error:
        reason = safe_read.describe(error) if isinstance(error, OSError) else str(error)
        return False, [f"Undo: {visible_text(reason)}"]
    return True, undone_lines(reverted)


def undone_lines(reverted: Reverted) -> list[str]:
    label, left = reverted.manifest.label, reverted.left
    lines = [visible_text(line) for line in reverted.restored]
    if left:
        lines.append(f"Left as they are ({len(left)}):")
        lines.extend("  " + visible_text(line) for line in left)
    if reverted.restored:
        what = f"The rest of {label}" if left else label[:1].upper() + label[1:]
        lines.append(f"{visible_text(what)} was undone; the index was updated.")
    elif left:
        lines.append("Nothing was put back.")
    else:
        lines.append(f"Nothing needed undoing: every file was as before {visible_text(label)}.")
    return lines


def _fingerprint(path: Path, root: Path) -> bytes | None:
    """A digest of the file, read in chunks (a huge one is never held whole, a FIFO never waited
    on); None when it cannot be read (then any outcome counts as a change)."""
    try:
        with safe_read.open_file(path, root) as (fd, _), os.fdopen(fd, "rb", closefd=False) as file:
            return hashlib.file_digest(file, "sha256").digest()
    except OSError:
        return None
