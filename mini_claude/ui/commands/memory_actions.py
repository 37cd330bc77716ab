"""Editing and deleting one memory, the same from the REPL (`/memory edit|rm NAME`) and the shell
(`mini-claude memory edit|rm NAME`): which editor opens it, what the user is told afterwards,
what the delete question says. The callers print the lines their own way."""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.core import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import marked_text, visible_text
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore

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
    return f"Delete memory {marked_text(repr(memory.name))} ({visible_path(memory.file_name)})?"


def deleted_line(memory: MemoryFile) -> str:
    return f"Deleted {visible_path(memory.file_name)}; the index was updated."


def _fingerprint(path: Path, root: Path) -> bytes | None:
    """A digest of the file, read in chunks (a huge one is never held whole, a FIFO never waited
    on); None when it cannot be read (then any outcome counts as a change)."""
    digest = hashlib.sha256()
    try:
        with safe_read.open_file(path, root) as (fd, _):
            while chunk := os.read(fd, safe_read.READ_CHUNK_BYTES):
                digest.update(chunk)
    except OSError:
        return None
    return digest.digest()
