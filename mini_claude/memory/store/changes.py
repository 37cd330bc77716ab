"""Change sets: every change to memory files that can be undone (a tidy, `/memory rm`, a save over
an existing memory) is applied here. Before the first file changes, the old versions and a
manifest (each file's digest before and after) go to `.trash/` (trash.py), whose `.applying`
folder is the journal: `recover` (at start-up) finishes or reverts a set a crash left half-applied,
and `undo_last` reverts the last set.

A file is reverted only while it is as the set left it: one edited since (by hand, by another
session) is left as it is, one deleted since is not brought back, and, on an undo, a memory whose
name another memory holds now is not restored (two memories with one name would be ambiguous);
each is said in one line naming where its earlier version lies. The caller holds the folder's
lock and rebuilds the index (MemoryStore does both).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core import safe_read
from mini_claude.core.atomic import write_atomic
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.paths import visible_path
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.naming import name_key
from mini_claude.memory.store.trash import (
    AFTER,
    APPLIED,
    APPLYING,
    BEFORE,
    COPY_MAX_BYTES,
    UNDONE,
    ChangeSetFolder,
    Entry,
    Manifest,
    change_sets,
    new_change_set,
)


@dataclass(frozen=True)
class Change:
    file_name: str  # a memory file directly in the folder
    data: bytes | None  # its new content; None deletes it
    keep_mtime: bool = False  # a tidy rewrites the words, not the age of the facts


class ChangesNotApplied(MemoryStoreError):
    """Nothing of the set stands: what was done was put back (`outcome` says how that went)."""

    def __init__(self, reason: str, left: Sequence[str] = ()) -> None:
        self.reason = reason
        self.outcome = "; ".join(left) if left else "every memory file is as it was"
        super().__init__(f"{reason}: {self.outcome}")


class NothingToUndo(MemoryStoreError):
    """No change set to undo (or the last one was undone); the message says which."""


@dataclass
class Reverted:
    manifest: Manifest
    restored: list[str]  # one line per file put back
    left: list[str]  # one line per file left as it is, and why


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def apply_changes(root: Path, label: str, changes: Sequence[Change], now: float | None = None) -> Path | None:
    """Apply `changes` as one set; the trash folder keeping what they replaced, or None when no
    file would change. ChangesNotApplied when they could not all be applied."""
    now = time.time() if now is None else now
    olds, entries = [], []
    try:
        for change in changes:
            old = _current(root, change.file_name)
            new = digest_of(change.data) if change.data is not None else None
            if (digest_of(old) if old is not None else None) == new:
                continue
            mtime = os.stat(root / change.file_name).st_mtime_ns if old is not None else None
            olds.append((change, old))
            entries.append(Entry(change.file_name, digest_of(old) if old is not None else None, new, mtime))
    except OSError as error:
        raise ChangesNotApplied(safe_read.describe(error)) from error
    if not entries:
        return None
    manifest = Manifest(label, now, entries)
    with new_change_set(root, now) as folder:
        try:
            for change, old in olds:
                if old is not None:
                    folder.keep(BEFORE, change.file_name, old)
            folder.write_manifest(manifest)  # from here on, the journal
        except BaseException as error:
            folder.remove()
            if not isinstance(error, OSError):
                raise
            reason = f"the trash cannot keep the old versions: {safe_read.describe(error)}"
            raise ChangesNotApplied(reason) from error
        try:
            for (change, _), entry in zip(olds, entries, strict=True):
                _write(root, entry, change.data, restore_mtime=change.keep_mtime)
            folder.set_state(APPLIED)
        except BaseException as error:  # Ctrl+C too: what was done is put back first
            _, left = _revert(root, folder, manifest, applied=False)
            with contextlib.suppress(OSError):
                folder.set_state(UNDONE)
            if not isinstance(error, OSError):
                raise
            raise ChangesNotApplied(safe_read.describe(error), left) from error
        return folder.path


def describe_last(root: Path) -> str:
    """`the tidy (2026-03-01 14:02, 3 changes)`: what `undo_last` would revert; else NothingToUndo."""
    folder, manifest = _last(root)
    folder.close()
    return manifest.described()


def undo_last(root: Path, memories: Sequence[MemoryFile]) -> Reverted:
    """Revert the last change set (see the module); `memories`: the folder's, for name clashes."""
    folder, manifest = _last(root)
    with folder:
        restored, left = _revert(root, folder, manifest, applied=folder.state == APPLIED, memories=memories)
        try:
            folder.set_state(UNDONE)
        except OSError as error:
            left.append(f"the trash could not note that this was undone: {safe_read.describe(error)}")
    return Reverted(manifest, restored, left)


def recover(root: Path) -> list[str]:
    """Finish or revert each set a crash left applying; one line per set saying which."""
    folders = change_sets(root)
    try:
        return [line for folder in reversed(folders) if (line := _recovered(root, folder)) is not None]
    finally:
        for folder in folders:
            folder.close()


def _recovered(root: Path, folder: ChangeSetFolder) -> str | None:
    if folder.state != APPLYING:
        return None
    try:
        manifest = folder.read_manifest()
    except FileNotFoundError:
        folder.remove()  # stopped before its first change: nothing to do
        return None
    except (OSError, ValueError) as error:
        return f"Memory: an interrupted change could not be finished or reverted: {error}"
    what = manifest.described()
    if all(_digest_now(root, entry.file) == entry.after for entry in manifest.entries):
        folder.set_state(APPLIED)
        return f"Memory: {what} was interrupted after its last change, and stands (/memory undo reverts it)."
    _, left = _revert(root, folder, manifest, applied=False)
    folder.set_state(UNDONE)
    outcome = "every memory file is as before it" if not left else "; ".join(left)
    return f"Memory: {what} was interrupted part-way, and reverted: {outcome}."


@dataclass
class _Plan:
    """Reverting one file: `earlier` is put back (None: remove what the set created)."""

    entry: Entry
    current: bytes | None
    earlier: bytes | None = None
    name: str = ""


def _revert(
    root: Path,
    folder: ChangeSetFolder,
    manifest: Manifest,
    *,
    applied: bool,
    memories: Sequence[MemoryFile] | None = None,
) -> tuple[list[str], list[str]]:
    """Put back every file of the set still as it left it. `applied`: the set was applied whole
    (a missing file it created was deleted since, not never written). With `memories` (an
    undo), a restore whose name another memory would hold afterwards is skipped."""
    restored: list[str] = []
    left: list[str] = []
    plans = []
    for entry in reversed(manifest.entries):
        try:
            if (plan := _plan(root, folder, manifest.label, entry, applied, left)) is not None:
                plans.append(plan)
        except OSError as error:
            left.append(f"{visible_path(entry.file)} could not be put back: {safe_read.describe(error)}")
    if memories is not None:
        plans = _without_name_clashes(folder, manifest.label, plans, memories, left)
    for plan in plans:
        try:
            restored.append(_carry_out(root, folder, manifest.label, plan))
        except OSError as error:
            left.append(f"{visible_path(plan.entry.file)} could not be put back: {safe_read.describe(error)}")
    return restored, left


def _plan(
    root: Path, folder: ChangeSetFolder, label: str, entry: Entry, applied: bool, left: list[str]
) -> _Plan | None:
    """How to revert `entry`, or None (with the line saying why, if anything is to be said)."""
    shown, copy = visible_path(entry.file), folder.shown(BEFORE, entry.file)
    current = _current(root, entry.file)
    digest = digest_of(current) if current is not None else None
    if entry.before is None and current is None:
        if applied:  # (else it may never have been written)
            left.append(f"{shown}, which {label} created, was deleted since: nothing to remove")
    elif digest == entry.after:
        if entry.before is None:
            return _Plan(entry, current)
        earlier = folder.read(BEFORE, entry.file)
        name = frontmatter.parse(earlier.decode("utf-8", "replace")).fields.get("name", "")
        return _Plan(entry, current, earlier, name)
    elif digest == entry.before:
        pass  # the set never got to it
    elif entry.before is None:
        left.append(
            f"{shown} was edited since {label} created it: kept as it is (delete it by hand if unwanted)"
        )
    elif entry.after is None:
        left.append(f"{shown} exists again: not overwritten; the version {label} deleted is {copy}")
    elif current is None:
        left.append(f"{shown} was deleted since {label}: not brought back; its version before it is {copy}")
    else:
        left.append(f"{shown} was edited since {label}: not overwritten; its version before it is {copy}")
    return None


def _without_name_clashes(
    folder: ChangeSetFolder, label: str, plans: list[_Plan], memories: Sequence[MemoryFile], left: list[str]
) -> list[_Plan]:
    """The plans whose restored memory's name no other memory holds once the undo is done (a
    memory saved since under that name, or another restore); each one dropped gets a line. A
    dropped restore keeps its file as it is now, whose name may clash in turn: hence the loop."""
    usable = [m for m in memories if m.problem is None]
    while True:
        reverted = {plan.entry.file for plan in plans}
        held = {name_key(m.name): m.file_name for m in reversed(usable) if m.file_name not in reverted}
        clash = next(
            (
                (plan, holder)
                for plan in plans
                if plan.earlier is not None
                and plan.name
                and (holder := held.setdefault(name_key(plan.name), plan.entry.file)) != plan.entry.file
            ),
            None,
        )
        if clash is None:
            return plans
        plan, holder = clash
        left.append(
            f"{visible_path(plan.entry.file)} not restored: a memory named {plan.name!r} exists now "
            f"({visible_path(holder)}); its version before {label} is {folder.shown(BEFORE, plan.entry.file)}"
        )
        plans = [other for other in plans if other is not plan]


def _carry_out(root: Path, folder: ChangeSetFolder, label: str, plan: _Plan) -> str:
    """Revert one file, keeping what it replaces in `after/`; the line saying so."""
    shown = visible_path(plan.entry.file)
    if plan.current is not None:
        with contextlib.suppress(FileExistsError):  # kept already, by an undo a crash stopped
            folder.keep(AFTER, plan.entry.file, plan.current)
    _write(root, plan.entry, plan.earlier, restore_mtime=True)
    if plan.earlier is None:
        return f"removed {shown} ({label} had created it; it is in {folder.shown(AFTER, plan.entry.file)})"
    return f"restored {shown}"


def _write(root: Path, entry: Entry, data: bytes | None, *, restore_mtime: bool) -> None:
    path = root / entry.file
    if data is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    write_atomic(path, data)
    if restore_mtime and entry.mtime_ns is not None:
        os.utime(path, ns=(entry.mtime_ns, entry.mtime_ns), follow_symlinks=False)


def _current(root: Path, file_name: str) -> bytes | None:
    """The file's bytes, None when there is none; OSError when it is not a file we read whole."""
    try:
        found = safe_read.read_bytes(root / file_name, root, COPY_MAX_BYTES)
    except FileNotFoundError:
        return None
    if found.was_cut:
        limit = safe_read.format_size(COPY_MAX_BYTES)
        raise OSError(errno.EFBIG, f"over {limit}, too large to keep in the trash", str(root / file_name))
    return found.data


def _digest_now(root: Path, file_name: str) -> str | None:
    try:
        current = _current(root, file_name)
    except OSError:
        return "unreadable"
    return digest_of(current) if current is not None else None


def _last(root: Path) -> tuple[ChangeSetFolder, Manifest]:
    """The newest change set with a manifest (one without changed nothing); NothingToUndo when
    there is none or it was undone, MemoryStoreError when its manifest is not usable."""
    folders = change_sets(root)
    found: tuple[ChangeSetFolder, Manifest] | None = None
    try:
        for folder in folders:
            try:
                found = folder, folder.read_manifest()
                break
            except FileNotFoundError:
                continue
            except (OSError, ValueError) as error:
                raise MemoryStoreError(f"cannot undo the last change: {error}") from error
    finally:
        for folder in folders:
            if found is None or folder is not found[0]:
                folder.close()
    if found is None:
        raise NothingToUndo("Nothing to undo.")
    if found[0].state == UNDONE:
        found[0].close()
        raise NothingToUndo(f"The last change, {found[1].described()}, was already undone.")
    return found
