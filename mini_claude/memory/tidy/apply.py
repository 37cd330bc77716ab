"""Applying the changes of a tidy that the user accepted, as one change set (memory/store/changes.py).

Under the memory folder's lock (other sessions' saves wait), every change is checked again
against the folder as it is now and by the rules of every memory write: a file whose bytes
changed since tidy read it (another session saved it, an editor did) is skipped and said so,
never overwritten; a new memory whose name was taken meanwhile likewise. What the rest replace or
delete goes to the trash first, and a failure part-way puts back what was done.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core import safe_read
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.paths import visible_path
from mini_claude.memory.store.changes import Change, ChangesNotApplied, digest_of
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import INDEX_FILE
from mini_claude.memory.store.trash import COPY_MAX_BYTES
from mini_claude.memory.tidy.hint import note_tidied
from mini_claude.memory.tidy.proposal import (
    FileChange,
    checked_memory_text,
    file_name_problem,
    name_conflicts,
    new_file_name,
)

TIDY_LABEL = "the tidy"  # how undo and start-up recovery name a tidy's change set


@dataclass
class ApplyResult:
    applied: list[FileChange]  # as applied (a new memory's file name may differ from the proposal's)
    skipped: list[str]  # one line per change not applied, and why
    trash: Path | None = None  # this tidy's folder in the trash, when anything was applied


def apply_tidy(store: MemoryStore, changes: Sequence[FileChange]) -> ApplyResult:
    """Apply what still applies of `changes`; MemoryStoreError (one line) when nothing could be,
    every file then being as it was."""
    with store.locked():
        ready, skipped = _still_applicable(store, changes)
        if not ready:
            return ApplyResult([], skipped)
        writes = [
            Change(
                c.file_name, c.new_text.encode("utf-8") if c.new_text is not None else None, keep_mtime=True
            )
            for c in ready
        ]
        try:
            trash = store.apply_changes(TIDY_LABEL, writes)
        except ChangesNotApplied as error:
            raise MemoryStoreError(f"the tidy was not applied ({error.reason}): {error.outcome}") from error
    note_tidied(store.root, time.time())
    return ApplyResult(ready, skipped, trash)


def _still_applicable(
    store: MemoryStore, changes: Sequence[FileChange]
) -> tuple[list[FileChange], list[str]]:
    """The changes that apply to the folder as it is now, and a line for each that does not."""
    taken = {name.casefold() for name in os.listdir(store.root)} | {INDEX_FILE.casefold()}
    ready: list[FileChange] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for change in changes:
        shown = visible_path(change.file_name)
        if change.action != "delete":
            checked = checked_memory_text(change.new_text)
            if isinstance(checked, str) or checked[0] != change.new_text:
                skipped.append(f"{shown}: {checked if isinstance(checked, str) else 'not in canonical form'}")
                continue
            if change.action == "create":
                file_name = change.file_name
                if file_name_problem(file_name) or file_name.casefold() in taken:
                    file_name = new_file_name(checked[1], taken)  # taken meanwhile (or never valid)
                taken.add(file_name.casefold())
                ready.append(dataclasses.replace(change, file_name=file_name))
                continue
        if (problem := file_name_problem(change.file_name)) or change.old is None or change.file_name in seen:
            skipped.append(problem or f"{shown}: not a change tidy proposed")
        elif (changed := _changed_since_read(store, change)) is not None:
            skipped.append(f"{shown} {changed}")
        else:
            seen.add(change.file_name)
            ready.append(change)
    conflicts = name_conflicts(ready, store.scan())
    skipped += [f"{visible_path(ready[index].file_name)}: {reason}" for index, reason in conflicts.items()]
    return [change for index, change in enumerate(ready) if index not in conflicts], skipped


def _changed_since_read(store: MemoryStore, change: FileChange) -> str | None:
    """None when the file is still as tidy read it, else what happened to it."""
    assert change.old is not None
    try:
        found = safe_read.read_bytes(store.root / change.file_name, store.root, COPY_MAX_BYTES)
    except FileNotFoundError:
        return "is gone (deleted since tidy read it)"
    except OSError as error:
        return f"cannot be read: {safe_read.describe(error)}"
    if found.was_cut or digest_of(found.data) != change.old.digest:
        return "changed since tidy read it (another session or an editor saved it): left as it is"
    return None
