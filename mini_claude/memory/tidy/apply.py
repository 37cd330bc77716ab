"""Applying the changes of a tidy that the user accepted, as one change set (memory/store/changes.py).

Under the memory folder's lock (other sessions' saves wait), each change is checked against the
folder as it is now: a file whose bytes changed since tidy read it (another session saved it, an
editor did) is skipped and said so, never overwritten; a new memory whose file name was taken
meanwhile gets another, and one whose name was taken is skipped. What the rest replace or delete
goes to the trash first, and a failure part-way puts back what was done.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.paths import visible_path
from mini_claude.memory.provenance import Provenance, stamped
from mini_claude.memory.store.changes import Change, ChangesNotApplied
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import INDEX_FILE
from mini_claude.memory.store.reverting import current_bytes, digest_of
from mini_claude.memory.store.validation import memory_fields
from mini_claude.memory.tidy.hint import note_tidied
from mini_claude.memory.tidy.proposal import FileChange, name_conflicts, new_file_name

TIDY_LABEL = "the tidy"  # how undo and start-up recovery name a tidy's change set


@dataclass
class ApplyResult:
    applied: list[FileChange]  # as applied (a new memory's file name may differ from the proposal's)
    skipped: list[str]  # one line per change not applied, and why
    trash: Path | None = None  # this tidy's folder in the trash, when anything was applied


def apply_tidy(store: MemoryStore, changes: Sequence[FileChange]) -> ApplyResult:
    """Apply what still applies of `changes` (a proposal's, checked when it was made); MemoryStoreError
    (one line) when nothing could be, every file then being as it was."""
    with store.locked():
        taken = {name.casefold() for name in os.listdir(store.root)} | {INDEX_FILE.casefold()}
        ready: list[FileChange] = []
        skipped: list[str] = []
        for change in changes:
            if change.action == "create" and change.new_text is not None:
                if change.file_name.casefold() in taken:  # taken meanwhile: another
                    fields = frontmatter.parse(change.new_text).fields
                    change = dataclasses.replace(change, file_name=new_file_name(fields, taken))
                taken.add(change.file_name.casefold())
            elif (changed := _changed_since_read(store, change)) is not None:
                skipped.append(f"{visible_path(change.file_name)} {changed}")
                continue
            ready.append(change)
        conflicts = name_conflicts(ready, store.scan())
        skipped += [f"{visible_path(ready[i].file_name)}: {reason}" for i, reason in conflicts.items()]
        ready = [change for index, change in enumerate(ready) if index not in conflicts]
        if not ready:
            return ApplyResult([], skipped)
        now = time.time()
        writes = [Change(c.file_name, _data(c, now), keep_mtime=True) for c in ready]
        try:
            trash = store.apply_changes(TIDY_LABEL, writes)
        except ChangesNotApplied as error:
            raise MemoryStoreError(f"the tidy was not applied ({error.reason}): {error.outcome}") from error
    note_tidied(store.root, time.time())
    return ApplyResult(ready, skipped, trash)


def _data(change: FileChange, now: float) -> bytes | None:
    """The file as written: the fields a memory keeps, the body, and who wrote it (the tidy, the
    first save's time kept), so the memory is not taken for one a person edited."""
    if change.new_text is None:
        return None
    parsed = frontmatter.parse(change.new_text)
    fields, body = parsed.fields, parsed.body
    kept = memory_fields(fields["name"], fields["description"], fields["type"], fields)
    previous = frontmatter.parse(change.old.text).fields if change.old is not None else None
    return stamped(kept, body, Provenance("tidy"), previous, now).encode("utf-8")


def _changed_since_read(store: MemoryStore, change: FileChange) -> str | None:
    """None when the file is still as tidy read it, else what happened to it."""
    try:
        found = current_bytes(store.root, change.file_name)  # (as the change set will read it)
    except OSError as error:
        return f"cannot be read: {safe_read.describe(error)}"
    if found is None:
        return "is gone (deleted since tidy read it)"
    if change.old is None or digest_of(found) != change.old.digest:
        return "changed since tidy read it (another session or an editor saved it): left as it is"
    return None
