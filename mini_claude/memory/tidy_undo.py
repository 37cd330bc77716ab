"""Undoing the last tidy: what it created goes to the trash, what it replaced or deleted comes back.

Each file is judged by its digest against the tidy's record: a file still as the tidy left it is
put back; one edited since (by hand, by another session) is left as it is and said so, never
overwritten, with where its earlier version lies in the trash. A change the tidy never got to
(it was stopped part-way) is found as it was, and needs nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
import os

from mini_claude import safe_read
from mini_claude.atomic import write_atomic
from mini_claude.errors import MemoryStoreError
from mini_claude.memory.store import MemoryStore
from mini_claude.memory.tidy_proposal import TIDY_READ_MAX_BYTES, digest_of
from mini_claude.memory.tidy_record import RecordedChange, TidyRecord, parse_record
from mini_claude.memory.trash import AFTER, BEFORE, RECORD_FILE, TidyFolder, tidy_folders
from mini_claude.paths import visible_path

log = logging.getLogger("mini_claude")


class NothingToUndo(MemoryStoreError):
    """There is no tidy to undo (or the last one was undone); the message says which."""


def describe_last_tidy(store: MemoryStore) -> str:
    """`the tidy of 2026-03-01 14:02 (3 changes)`; NothingToUndo or MemoryStoreError otherwise."""
    folder, record = _last_tidy(store)
    folder.close()
    return _described(record)


def undo_last_tidy(store: MemoryStore) -> tuple[list[str], list[str]]:
    """Undo the last tidy: (lines saying what was put back, lines saying what was left and why)."""
    with store.locked():
        folder, record = _last_tidy(store)
        with folder:
            restored, left = revert(store, folder, record)
            record.state = "undone"
            try:
                folder.write_record(record.to_json())
            except OSError as error:
                left.append(
                    f"the trash could not note that this tidy was undone: {safe_read.describe(error)}"
                )
        store.rebuild_index()
    return restored, left


def revert(store: MemoryStore, folder: TidyFolder, record: TidyRecord) -> tuple[list[str], list[str]]:
    """Put back every change of `record` whose file is as the tidy left it (see the module)."""
    restored: list[str] = []
    left: list[str] = []
    for change in reversed(record.changes):
        try:
            _revert_one(store, folder, change, restored, left)
        except OSError as error:
            log.warning("undo of %s failed: %s", change.file_name, error)
            left.append(
                f"{visible_path(change.file_name)} could not be put back: {safe_read.describe(error)}"
            )
    return restored, left


def _revert_one(
    store: MemoryStore, folder: TidyFolder, change: RecordedChange, restored: list[str], left: list[str]
) -> None:
    file_name, shown = change.file_name, visible_path(change.file_name)
    current = _current(store, file_name)
    digest = digest_of(current) if current is not None else None
    if change.action == "create":
        if digest is None:
            return  # never written, or removed since
        if digest == change.after:
            folder.move_in(AFTER, file_name)
            restored.append(
                f"removed {shown} (the tidy had created it; it is in {folder.shown(AFTER, file_name)})"
            )
        else:
            left.append(
                f"{shown} was edited since the tidy created it: kept as it is (delete it by hand if unwanted)"
            )
        return
    if digest is not None and digest == change.before:
        return  # the tidy never got to it
    before_copy = folder.shown(BEFORE, file_name)
    if change.action == "delete":
        if digest is not None:
            left.append(
                f"{shown} exists again: not overwritten; the version the tidy deleted is {before_copy}"
            )
        elif not folder.has(BEFORE, file_name):
            left.append(f"{shown}: the version the tidy deleted is no longer in the trash")
        else:
            folder.move_out(BEFORE, file_name)
            restored.append(f"restored {shown}")
        return
    if digest is not None and digest != change.after:
        left.append(
            f"{shown} was edited since the tidy: not overwritten; its version before it is {before_copy}"
        )
        return
    earlier = folder.read(BEFORE, file_name)
    if current is not None and not folder.has(AFTER, file_name):
        folder.keep_copy(AFTER, file_name, current)
    write_atomic(store.root / file_name, earlier)
    if change.before_mtime_ns is not None:
        os.utime(store.root / file_name, ns=(change.before_mtime_ns,) * 2, follow_symlinks=False)
    restored.append(f"restored {shown}")


def _current(store: MemoryStore, file_name: str) -> bytes | None:
    """The start of the file (as much as tidy reads), or None when there is none."""
    try:
        return safe_read.read_bytes(store.root / file_name, store.root, TIDY_READ_MAX_BYTES).data
    except FileNotFoundError:
        return None


def _last_tidy(store: MemoryStore) -> tuple[TidyFolder, TidyRecord]:
    """The newest tidy folder holding a record (one whose record is missing never changed a file:
    it is written before the first change); a record that is not usable stops the undo."""
    if (problem := store.root_problem()) is not None:
        raise MemoryStoreError(problem)
    try:
        folders = tidy_folders(store.root)
    except OSError as error:
        raise MemoryStoreError(f"the trash cannot be read: {safe_read.describe(error)}") from error
    found: tuple[TidyFolder, TidyRecord] | None = None
    try:
        for folder in folders:
            try:
                record = parse_record(folder.read_record())
            except FileNotFoundError:
                continue
            except (OSError, ValueError) as error:
                shown = folder.shown("", RECORD_FILE)
                raise MemoryStoreError(
                    f"cannot undo the last tidy: {shown} is not usable ({error})"
                ) from error
            found = (folder, record)
            break
    finally:
        for folder in folders:
            if found is None or folder is not found[0]:
                folder.close()
    if found is None:
        raise NothingToUndo("No tidy to undo.")
    if found[1].state == "undone":
        found[0].close()
        raise NothingToUndo(f"The last tidy ({_described(found[1])}) was already undone.")
    return found


def _described(record: TidyRecord) -> str:
    when = dt.datetime.fromtimestamp(record.at).strftime("%Y-%m-%d %H:%M")
    count = len(record.changes)
    return f"the tidy of {when}, {count} change{'' if count == 1 else 's'}"
