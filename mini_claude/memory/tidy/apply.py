"""Applying the changes of a tidy that the user accepted.

Under the memory folder's lock (other sessions' saves wait), every change is checked again
against the folder as it is now and through the rules of every memory write: a file whose bytes
changed since tidy read it (another session saved it, an editor did) is skipped and said so,
never overwritten; a new memory whose name was taken meanwhile likewise. What a change replaces
or deletes goes to the trash first (trash.py), the record of the tidy is written before the
first change, and a failure part-way puts back what was done (memory/tidy/undo.py): the folder ends as
it was or as the tidy leaves it. The index is rebuilt at the end.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core import safe_read
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.paths import visible_path
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import INDEX_FILE
from mini_claude.memory.tidy.hint import note_tidied
from mini_claude.memory.tidy.proposal import (
    TIDY_READ_MAX_BYTES,
    FileChange,
    checked_memory_text,
    digest_of,
    file_name_problem,
    name_conflicts,
    new_file_name,
)
from mini_claude.memory.tidy.record import RecordedChange, TidyRecord
from mini_claude.memory.tidy.trash import BEFORE, TidyFolder, new_tidy_folder
from mini_claude.memory.tidy.undo import revert


@dataclass
class ApplyResult:
    applied: list[FileChange]  # as applied (a new memory's file name may differ from the proposal's)
    skipped: list[str]  # one line per change not applied, and why
    trash: Path | None = None  # this tidy's folder in the trash, when anything was applied


def apply_tidy(store: MemoryStore, changes: Sequence[FileChange], *, now: float | None = None) -> ApplyResult:
    """Apply what still applies of `changes`; MemoryStoreError (one line) when nothing could be,
    every file then being as it was."""
    now = time.time() if now is None else now
    with store.locked():
        memories = store.scan()
        ready, skipped = _still_applicable(store, changes, memories)
        if not ready:
            return ApplyResult([], skipped)
        with new_tidy_folder(store.root, now) as folder:
            record = TidyRecord(now, "applying", [_recorded(change) for change, _ in ready])
            try:
                folder.write_record(record.to_json())
            except OSError as error:
                raise MemoryStoreError(f"the tidy was not applied: {safe_read.describe(error)}") from error
            try:
                for change, old in ready:
                    _apply_one(store, folder, change, old)
            except BaseException as error:  # Ctrl+C too: what was done is put back first
                _, left = revert(store, folder, record)
                record.state = "undone"
                _write_quietly(folder, record)
                store.rebuild_index()
                if not isinstance(error, MemoryStoreError | OSError):
                    raise
                reason = safe_read.describe(error) if isinstance(error, OSError) else str(error)
                outcome = "every memory file is as it was" if not left else "; ".join(left)
                raise MemoryStoreError(f"the tidy was not applied ({reason}): {outcome}") from error
            record.state = "applied"
            _write_quietly(folder, record)
            store.rebuild_index()
            trash = folder.path
    note_tidied(store.root, now)
    return ApplyResult([change for change, _ in ready], skipped, trash)


def _still_applicable(
    store: MemoryStore, changes: Sequence[FileChange], memories: list[MemoryFile]
) -> tuple[list[tuple[FileChange, bytes | None]], list[str]]:
    """The changes that apply to the folder as it is now, each with the bytes it replaces."""
    taken = {name.casefold() for name in os.listdir(store.root)} | {INDEX_FILE.casefold()}
    ready: list[tuple[FileChange, bytes | None]] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for change in changes:
        shown = visible_path(change.file_name)
        fields: dict[str, str] = {}
        if change.action != "delete":
            checked = checked_memory_text(change.new_text)
            if isinstance(checked, str) or checked[0] != change.new_text:
                skipped.append(f"{shown}: {checked if isinstance(checked, str) else 'not in canonical form'}")
                continue
            fields = checked[1]
        if change.action == "create":
            file_name = change.file_name
            if file_name_problem(file_name) or file_name.casefold() in taken:
                file_name = new_file_name(fields, taken)  # taken meanwhile (or never valid): another
            taken.add(file_name.casefold())
            ready.append((dataclasses.replace(change, file_name=file_name), None))
            continue
        if (problem := file_name_problem(change.file_name)) or change.old is None or change.file_name in seen:
            skipped.append(problem or f"{shown}: not a change tidy proposed")
            continue
        seen.add(change.file_name)
        try:
            found = safe_read.read_bytes(store.root / change.file_name, store.root, TIDY_READ_MAX_BYTES)
        except FileNotFoundError:
            skipped.append(f"{shown} is gone (deleted since tidy read it)")
            continue
        except OSError as error:
            skipped.append(f"{shown} cannot be read: {safe_read.describe(error)}")
            continue
        if digest_of(found.data) != change.old.digest or found.size != change.old.size:
            skipped.append(
                f"{shown} changed since tidy read it (another session or an editor saved it): left as it is"
            )
            continue
        ready.append((change, found.data))
    conflicts = name_conflicts([change for change, _ in ready], memories)
    for index in sorted(conflicts):
        skipped.append(f"{visible_path(ready[index][0].file_name)}: {conflicts[index]}")
    return [item for index, item in enumerate(ready) if index not in conflicts], skipped


def _recorded(change: FileChange) -> RecordedChange:
    before = change.old.digest if change.old is not None else None
    after = digest_of(change.new_text.encode("utf-8")) if change.new_text is not None else None
    mtime_ns = change.old.mtime_ns if change.old is not None and change.action == "change" else None
    return RecordedChange(change.action, change.file_name, before, after, mtime_ns)


def _apply_one(store: MemoryStore, folder: TidyFolder, change: FileChange, old: bytes | None) -> None:
    if change.action == "delete":
        folder.move_in(BEFORE, change.file_name)
        return
    if change.action == "change":
        assert old is not None
        folder.keep_copy(BEFORE, change.file_name, old)
    assert change.new_text is not None
    parsed = frontmatter.parse(change.new_text)
    target = store.root / change.file_name
    store.save(
        name=parsed.fields["name"],
        description=parsed.fields["description"],
        memory_type=parsed.fields["type"],
        body=parsed.body,
        target=target,
    )
    if change.old is not None:  # the facts are as old as they were: recall's freshness note says so
        os.utime(target, ns=(change.old.mtime_ns, change.old.mtime_ns), follow_symlinks=False)


def _write_quietly(folder: TidyFolder, record: TidyRecord) -> None:
    """The record's new state; when it cannot be written the old one stands, which undo reads alike."""
    with contextlib.suppress(OSError):
        folder.write_record(record.to_json())
