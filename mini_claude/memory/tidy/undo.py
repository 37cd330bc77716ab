"""Undoing the last tidy: what it created goes to the trash, what it replaced or deleted comes back.

Each file is judged by its digest against the tidy's record: only a file still as the tidy left
it is reverted. One changed since (by hand, by another session) is left as it is, one deleted
since stays deleted (it is never brought back from the trash), and a memory whose name another
memory has taken meanwhile is not restored (two memories with one name would be ambiguous):
each is said so in one line, with where its earlier version lies in the trash. A change the tidy
never got to (it was stopped part-way) is found as it was, and needs nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from dataclasses import dataclass

from mini_claude.core import safe_read
from mini_claude.core.atomic import write_atomic
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.paths import visible_path
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import name_key
from mini_claude.memory.tidy.proposal import TIDY_READ_MAX_BYTES, digest_of
from mini_claude.memory.tidy.record import RecordedChange, TidyRecord, parse_record
from mini_claude.memory.tidy.trash import AFTER, BEFORE, RECORD_FILE, TidyFolder, tidy_folders

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
            restored, left = revert(store, folder, record, undoing=True)
            record.state = "undone"
            try:
                folder.write_record(record.to_json())
            except OSError as error:
                left.append(
                    f"the trash could not note that this tidy was undone: {safe_read.describe(error)}"
                )
        store.rebuild_index()
    return restored, left


@dataclass
class _Revert:
    """What undoing one change does, once it is known that it can: `earlier` is the file to put back
    (None: remove what the tidy created); `name` is its memory's name."""

    change: RecordedChange
    current: bytes | None
    earlier: bytes | None = None
    name: str = ""


def revert(
    store: MemoryStore, folder: TidyFolder, record: TidyRecord, *, undoing: bool = False
) -> tuple[list[str], list[str]]:
    """Put back every change of `record` whose file is as the tidy left it (see the module).
    `undoing`: the user's undo, long after the tidy (not a failed tidy putting back what it did),
    so a restore whose name another memory would still hold afterwards is skipped."""
    restored: list[str] = []
    left: list[str] = []
    plans: list[_Revert] = []
    for change in reversed(record.changes):
        try:
            if (plan := _plan(store, folder, change, record.state == "applied", left)) is not None:
                plans.append(plan)
        except OSError as error:
            _could_not(change, error, left)
    if undoing:
        plans = _without_name_clashes(store, folder, plans, left)
    for plan in plans:
        try:
            _carry_out(store, folder, plan)
            restored.append(_done_line(folder, plan))
        except OSError as error:
            _could_not(plan.change, error, left)
    return restored, left


def _plan(
    store: MemoryStore, folder: TidyFolder, change: RecordedChange, applied: bool, left: list[str]
) -> _Revert | None:
    """How to revert `change`, or None (with the line saying why, if anything is to be said)."""
    file_name, shown = change.file_name, visible_path(change.file_name)
    current = _current(store, file_name)
    digest = digest_of(current) if current is not None else None
    if change.action == "create":
        if digest is None:
            if applied:  # (else it may never have been written)
                left.append(f"{shown}, which the tidy created, was deleted since: nothing to remove")
        elif digest != change.after:
            left.append(
                f"{shown} was edited since the tidy created it: kept as it is (delete it by hand if unwanted)"
            )
        return _Revert(change, current) if digest == change.after else None
    if digest is not None and digest == change.before:
        return None  # the tidy never got to it
    before_copy = folder.shown(BEFORE, file_name)
    if change.action == "delete" and digest is not None:
        left.append(f"{shown} exists again: not overwritten; the version the tidy deleted is {before_copy}")
    elif change.action == "change" and digest is None:
        left.append(
            f"{shown} was deleted since the tidy: not brought back; its version before it is {before_copy}"
        )
    elif change.action == "change" and digest != change.after:
        left.append(
            f"{shown} was edited since the tidy: not overwritten; its version before it is {before_copy}"
        )
    elif not folder.has(BEFORE, file_name):
        left.append(f"{shown}: its version before the tidy is no longer in the trash")
    else:
        earlier = folder.read(BEFORE, file_name)
        return _Revert(change, current, earlier, frontmatter.parse(earlier).fields.get("name", ""))
    return None


def _without_name_clashes(
    store: MemoryStore, folder: TidyFolder, plans: list[_Revert], left: list[str]
) -> list[_Revert]:
    """The plans whose restored memory's name no other memory holds once the undo is done (a
    memory saved since under that name, or another restore); each one dropped gets a line. A
    dropped restore keeps its file as it is now, whose name may clash in turn: hence the loop."""
    memories = [m for m in store.scan() if m.problem is None]
    while True:
        reverted = {plan.change.file_name for plan in plans}
        held = {name_key(m.name): m.file_name for m in reversed(memories) if m.file_name not in reverted}
        clash = None
        for plan in plans:
            if plan.earlier is None or not plan.name:
                continue
            holder = held.setdefault(name_key(plan.name), plan.change.file_name)
            if holder != plan.change.file_name:
                clash = plan, holder
                break
        if clash is None:
            return plans
        plan, holder = clash
        left.append(
            f"{visible_path(plan.change.file_name)} not restored: a memory named {plan.name!r} exists "
            f"now ({visible_path(holder)}); its version before the tidy is "
            f"{folder.shown(BEFORE, plan.change.file_name)}"
        )
        plans = [other for other in plans if other is not plan]


def _carry_out(store: MemoryStore, folder: TidyFolder, plan: _Revert) -> None:
    file_name = plan.change.file_name
    if plan.earlier is None:
        folder.move_in(AFTER, file_name)
    elif plan.change.action == "delete":
        folder.move_out(BEFORE, file_name)
    else:
        if plan.current is not None and not folder.has(AFTER, file_name):
            folder.keep_copy(AFTER, file_name, plan.current)
        write_atomic(store.root / file_name, plan.earlier)
        if plan.change.before_mtime_ns is not None:
            os.utime(store.root / file_name, ns=(plan.change.before_mtime_ns,) * 2, follow_symlinks=False)


def _done_line(folder: TidyFolder, plan: _Revert) -> str:
    shown = visible_path(plan.change.file_name)
    if plan.earlier is None:
        where = folder.shown(AFTER, plan.change.file_name)
        return f"removed {shown} (the tidy had created it; it is in {where})"
    return f"restored {shown}"


def _could_not(change: RecordedChange, error: OSError, left: list[str]) -> None:
    log.warning("undo of %s failed: %s", change.file_name, error)
    left.append(f"{visible_path(change.file_name)} could not be put back: {safe_read.describe(error)}")


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
