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

A set may change files of other scopes' folders too (a memory moved from this project to the
user's own): their entries name their scope, and `roots` says where each scope's folder is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.memory.store import trash
from mini_claude.memory.store.naming import is_memory_file_name
from mini_claude.memory.store.reverting import Roots, current_bytes, digest_or_none, revert, write_file
from mini_claude.memory.store.trash import ChangeSetFolder, Entry, Manifest


@dataclass(frozen=True)
class Change:
    file_name: str  # a memory file directly in the folder
    data: bytes | None  # its new content; None deletes it
    keep_mtime: bool = False  # a tidy rewrites the words, not the age of the facts
    scope: str = ""  # another scope's folder (see `roots`); "" the set's own
    mtime_ns: int | None = None  # the time the file is given (a moved memory keeps its age)

    def mtime_for(self, entry: Entry) -> int | None:
        return self.mtime_ns if self.mtime_ns is not None else entry.mtime_ns if self.keep_mtime else None


class ChangesNotApplied(MemoryStoreError):
    """Nothing of the set stands: what was done was put back (`outcome` says how that went)."""

    def __init__(self, reason: str, left: Sequence[str] = ()) -> None:
        self.reason, self.outcome = reason, "; ".join(left) or "every memory file is as it was"
        super().__init__(f"{reason}: {self.outcome}")


def apply_changes(
    root: Path, label: str, changes: Sequence[Change], now: float | None = None, roots: Roots | None = None
) -> Path | None:
    """Apply `changes` as one set: the trash folder keeping what they replaced, or None when no
    file would change. ChangesNotApplied when they could not all be applied."""
    now, roots = time.time() if now is None else now, {**(roots or {}), "": root}
    planned: list[tuple[Change, bytes | None, Entry]] = []
    try:
        for change in changes:
            name = change.file_name
            if "/" in name or "\0" in name or not is_memory_file_name(name) or change.scope not in roots:
                raise OSError(errno.EINVAL, "not a memory file in the memory folder", change.file_name)
            where = roots[change.scope]
            old = current_bytes(where, change.file_name)
            before, after = digest_or_none(old), digest_or_none(change.data)
            mtime = os.stat(where / change.file_name).st_mtime_ns if old is not None else None
            if before != after:
                planned.append((change, old, Entry(change.file_name, before, after, mtime, change.scope)))
    except OSError as error:
        raise ChangesNotApplied(safe_read.describe(error)) from error
    if not planned:
        return None
    manifest = Manifest(label, now, [entry for _, _, entry in planned])
    with trash.new_change_set(root, now) as folder:
        try:
            for change, old, entry in planned:
                if old is not None:
                    folder.keep(entry.part(trash.BEFORE), change.file_name, old)
            folder.write_manifest(manifest)  # from here on, the journal
        except BaseException as error:
            folder.remove()
            if not isinstance(error, OSError):
                raise
            reason = f"the trash cannot keep the old versions: {safe_read.describe(error)}"
            raise ChangesNotApplied(reason) from error
        try:
            for change, _, entry in planned:
                write_file(roots[change.scope] / entry.file, change.data, change.mtime_for(entry))
            folder.set_state(trash.APPLIED)
        except BaseException as error:  # Ctrl+C too: what was done is put back first
            _, left = revert(root, folder, manifest, False, roots=roots)
            with contextlib.suppress(OSError):
                folder.set_state(trash.UNDONE)
            if not isinstance(error, OSError):
                raise
            raise ChangesNotApplied(safe_read.describe(error), left) from error
        return folder.path


def recover(root: Path, roots: Roots | None = None) -> list[str]:
    """Finish or revert each set a crash left applying: one line each, saying which."""
    folders = trash.change_sets(root, applying=True)
    roots = {**(roots or {}), "": root}
    try:
        return [line for folder in reversed(folders) if (line := _recover(roots, folder))]
    finally:
        for folder in folders:
            folder.close()


def _recover(roots: Roots, folder: ChangeSetFolder) -> str | None:
    try:
        manifest = folder.read_manifest()
    except FileNotFoundError:
        folder.remove()  # stopped before its first change: nothing to do
        return None
    except (OSError, ValueError) as error:
        return f"Memory: an interrupted change could not be finished or reverted: {error}"
    what = manifest.described()
    if all(
        entry.scope in roots and _still(roots[entry.scope], entry.file, entry.after)
        for entry in manifest.entries
    ):
        folder.set_state(trash.APPLIED)
        return f"Memory: {what} was interrupted after its last change, and stands (/memory undo reverts it)."
    _, left = revert(roots[""], folder, manifest, False, roots=roots)
    folder.set_state(trash.UNDONE)
    outcome = "; ".join(left) or "every memory file is as before it"
    return f"Memory: {what} was interrupted part-way, and reverted: {outcome}."


def _still(root: Path, file_name: str, digest: str | None) -> bool:
    """Whether the file is (still) the one of `digest` (None: there is none)."""
    try:
        return digest_or_none(current_bytes(root, file_name)) == digest
    except OSError:
        return False
