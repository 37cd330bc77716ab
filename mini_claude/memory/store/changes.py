"""Change sets: each change to memory files that can be undone (a tidy, a `/memory rm`, a save over
a memory) is applied here. Before its first file changes, the old versions and a manifest (each
file's digest before and after) go to `.trash/` (trash.py), whose `.applying` folder is the
journal: `recover`, at start-up, finishes or reverts a set a crash left half-applied; `revert`
is also what `/memory undo` does to the last set (memory/undo.py).

A file is reverted only while it is as the set left it: one edited since (by hand, by another
session) is left as it is, one deleted since is not brought back, and, on an undo, a memory whose
name another memory holds now is not restored (two memories with one name would be ambiguous);
each gets one line naming where its earlier version lies. The caller holds the folder's lock and
rebuilds the index.
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

from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.paths import visible_path
from mini_claude.memory.store import trash
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.naming import is_memory_file_name, name_key
from mini_claude.memory.store.trash import ChangeSetFolder, Entry, Manifest


@dataclass(frozen=True)
class Change:
    file_name: str  # a memory file directly in the folder
    data: bytes | None  # its new content; None deletes it
    keep_mtime: bool = False  # a tidy rewrites the words, not the age of the facts


class ChangesNotApplied(MemoryStoreError):
    """Nothing of the set stands: what was done was put back (`outcome` says how that went)."""

    def __init__(self, reason: str, left: Sequence[str] = ()) -> None:
        self.reason, self.outcome = reason, "; ".join(left) or "every memory file is as it was"
        super().__init__(f"{reason}: {self.outcome}")


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def apply_changes(root: Path, label: str, changes: Sequence[Change], now: float | None = None) -> Path | None:
    """Apply `changes` as one set: the trash folder keeping what they replaced, or None when no
    file would change. ChangesNotApplied when they could not all be applied."""
    now = time.time() if now is None else now
    planned: list[tuple[Change, bytes | None, Entry]] = []
    try:
        for change in changes:
            if (
                "/" in change.file_name
                or "\0" in change.file_name
                or not is_memory_file_name(change.file_name)
            ):
                raise OSError(errno.EINVAL, "not a memory file in the memory folder", change.file_name)
            old = _current(root, change.file_name)
            before, after = _digest(old), _digest(change.data)
            mtime = os.stat(root / change.file_name).st_mtime_ns if old is not None else None
            if before != after:
                planned.append((change, old, Entry(change.file_name, before, after, mtime)))
    except OSError as error:
        raise ChangesNotApplied(safe_read.describe(error)) from error
    if not planned:
        return None
    manifest = Manifest(label, now, [entry for _, _, entry in planned])
    with trash.new_change_set(root, now) as folder:
        try:
            for change, old, _ in planned:
                if old is not None:
                    folder.keep(trash.BEFORE, change.file_name, old)
            folder.write_manifest(manifest)  # from here on, the journal
        except BaseException as error:
            folder.remove()
            if not isinstance(error, OSError):
                raise
            reason = f"the trash cannot keep the old versions: {safe_read.describe(error)}"
            raise ChangesNotApplied(reason) from error
        try:
            for change, _, entry in planned:
                _write(root, entry, change.data, keep_mtime=change.keep_mtime)
            folder.set_state(trash.APPLIED)
        except BaseException as error:  # Ctrl+C too: what was done is put back first
            _, left = revert(root, folder, manifest, False)
            with contextlib.suppress(OSError):
                folder.set_state(trash.UNDONE)
            if not isinstance(error, OSError):
                raise
            raise ChangesNotApplied(safe_read.describe(error), left) from error
        return folder.path


def recover(root: Path) -> list[str]:
    """Finish or revert each set a crash left applying: one line each, saying which."""
    folders = trash.change_sets(root, applying=True)
    try:
        return [line for folder in reversed(folders) if (line := _recover(root, folder))]
    finally:
        for folder in folders:
            folder.close()


def _recover(root: Path, folder: ChangeSetFolder) -> str | None:
    try:
        manifest = folder.read_manifest()
    except FileNotFoundError:
        folder.remove()  # stopped before its first change: nothing to do
        return None
    except (OSError, ValueError) as error:
        return f"Memory: an interrupted change could not be finished or reverted: {error}"
    what = manifest.described()
    if all(_still(root, entry.file, entry.after) for entry in manifest.entries):
        folder.set_state(trash.APPLIED)
        return f"Memory: {what} was interrupted after its last change, and stands (/memory undo reverts it)."
    _, left = revert(root, folder, manifest, False)
    folder.set_state(trash.UNDONE)
    outcome = "; ".join(left) or "every memory file is as before it"
    return f"Memory: {what} was interrupted part-way, and reverted: {outcome}."


@dataclass
class _Plan:
    """Reverting one file: `earlier` is put back (None: the set created it, it is removed)."""

    entry: Entry
    current: bytes | None
    earlier: bytes | None = None
    name: str = ""


def revert(
    root: Path,
    folder: ChangeSetFolder,
    manifest: Manifest,
    applied: bool,
    memories: Sequence[MemoryFile] = (),
) -> tuple[list[str], list[str]]:
    """Put back each file of the set still as it left it: (lines restored, lines left). `applied`:
    it was applied whole (a missing file it created was deleted since, not never written).
    `memories` (an undo): a restore whose name another memory would hold afterwards is skipped."""
    revert = _Reverting(root, folder, manifest.label)
    plans = [plan for entry in reversed(manifest.entries) if (plan := revert.plan(entry, applied))]
    for plan in revert.without_name_clashes(plans, memories):
        try:
            revert.carry_out(plan)
        except OSError as error:
            revert.could_not(plan.entry, error)
    return revert.restored, revert.left


class _Reverting:
    def __init__(self, root: Path, folder: ChangeSetFolder, label: str) -> None:
        self.root, self.folder, self.label = root, folder, label
        self.restored: list[str] = []
        self.left: list[str] = []

    def plan(self, entry: Entry, applied: bool) -> _Plan | None:
        """How to revert `entry`, or None (with the line saying why, if anything is to be said)."""
        shown, copy, label, say = (
            visible_path(entry.file),
            self.copy(entry.file),
            self.label,
            self.left.append,
        )
        try:
            current = _current(self.root, entry.file)
            if entry.before is None and current is None:
                if applied:  # (else it may never have been written)
                    say(f"{shown}, which {label} created, was deleted since: nothing to remove")
            elif _digest(current) == entry.after:
                if entry.before is None:
                    return _Plan(entry, current)
                earlier = self.folder.read(trash.BEFORE, entry.file)
                if digest_of(earlier) != entry.before:
                    raise OSError(errno.EINVAL, "its version before was altered in the trash", copy)
                name = frontmatter.parse(earlier.decode(errors="replace")).fields.get("name", "")
                return _Plan(entry, current, earlier, name)
            elif _digest(current) == entry.before:
                pass  # the set never got to it
            elif entry.before is None:
                say(f"{shown} was edited since {label} created it: kept as it is (delete it if unwanted)")
            elif entry.after is None:
                say(f"{shown} exists again: not overwritten; the version {label} deleted is {copy}")
            elif current is None:
                say(f"{shown} was deleted since {label}: not brought back; its version before it is {copy}")
            else:
                say(f"{shown} was edited since {label}: not overwritten; its version before it is {copy}")
        except OSError as error:
            self.could_not(entry, error)
        return None

    def without_name_clashes(self, plans: list[_Plan], memories: Sequence[MemoryFile]) -> list[_Plan]:
        """The plans whose restored memory's name no other memory holds once the undo is done (one
        saved since under that name, or another restore); each dropped gets a line. A dropped
        restore keeps its file as it is now, whose name may clash in turn: hence the loop."""
        usable = [m for m in memories if m.problem is None]
        while usable:
            reverted = {plan.entry.file for plan in plans}
            held = {name_key(m.name): m.file_name for m in reversed(usable) if m.file_name not in reverted}
            for plan in plans:
                file = plan.entry.file
                if plan.name and (holder := held.setdefault(name_key(plan.name), file)) != file:
                    self.left.append(
                        f"{visible_path(file)} not restored: a memory named {plan.name!r} exists now "
                        f"({visible_path(holder)}); its version before {self.label} is {self.copy(file)}"
                    )
                    plans = [other for other in plans if other is not plan]
                    break
            else:
                break
        return plans

    def carry_out(self, plan: _Plan) -> None:
        """Revert one file, keeping what it replaces in `after/`."""
        file, shown = plan.entry.file, visible_path(plan.entry.file)
        if plan.current is not None:
            with contextlib.suppress(FileExistsError):  # kept already, by an undo a crash stopped
                self.folder.keep(trash.AFTER, file, plan.current)
        _write(self.root, plan.entry, plan.earlier, keep_mtime=True)
        if plan.earlier is not None:
            self.restored.append(f"restored {shown}")
        else:
            kept = self.folder.shown(trash.AFTER, file)
            self.restored.append(f"removed {shown} ({self.label} had created it; it is in {kept})")

    def copy(self, file_name: str) -> str:
        return self.folder.shown(trash.BEFORE, file_name)

    def could_not(self, entry: Entry, error: OSError) -> None:
        self.left.append(f"{visible_path(entry.file)} could not be put back: {safe_read.describe(error)}")


def _write(root: Path, entry: Entry, data: bytes | None, *, keep_mtime: bool) -> None:
    path = root / entry.file
    if data is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    else:
        write_atomic(path, data)
        if keep_mtime and entry.mtime_ns is not None:
            os.utime(path, ns=(entry.mtime_ns, entry.mtime_ns), follow_symlinks=False)


def _current(root: Path, file_name: str) -> bytes | None:
    """The file's bytes, None when there is none; OSError when it is not one we keep whole."""
    try:
        found = safe_read.read_bytes(root / file_name, root, trash.COPY_MAX_BYTES)
    except FileNotFoundError:
        return None
    if found.was_cut:
        limit = safe_read.format_size(trash.COPY_MAX_BYTES)
        raise OSError(errno.EFBIG, f"over {limit}, too large to keep in the trash", str(root / file_name))
    return found.data


def _digest(data: bytes | None) -> str | None:
    return digest_of(data) if data is not None else None


def _still(root: Path, file_name: str, digest: str | None) -> bool:
    """Whether the file is (still) the one of `digest` (None: there is none)."""
    try:
        return _digest(_current(root, file_name)) == digest
    except OSError:
        return False
