"""`/memory undo`: revert the last change set (a tidy, a `/memory rm`, a save over a memory), each
file only while it is as the set left it (memory/store/changes.py says how), under the folder's
lock; the index follows."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.memory.store import trash
from mini_claude.memory.store.changes import revert
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.trash import ChangeSetFolder, Manifest


class NothingToUndo(MemoryStoreError):
    """No change set to undo, or the last one was undone already; the message says which."""


@dataclass
class Reverted:
    manifest: Manifest
    restored: list[str]  # one line per file put back
    left: list[str]  # one line per file left as it is, and why


def last_change(store: MemoryStore) -> tuple[str, str]:
    """The last change set's id and what it was, e.g. `the tidy (2026-03-01 14:02, 3 changes)`."""
    folder, manifest = _last(store)
    folder.close()
    return folder.id, manifest.described()


def undo_last(store: MemoryStore, expected: str | None = None) -> Reverted:
    """Revert the last change set; when `expected` (the id the user was asked about) is not the
    last any more (another session changed a memory meanwhile), MemoryStoreError and nothing is done."""
    with store.locked():
        folder, manifest = _last(store)
        with folder:
            if expected is not None and folder.id != expected:
                raise MemoryStoreError(
                    f"the last change is now {manifest.described()}, made since you were asked; "
                    "nothing was undone"
                )
            applied = folder.state == trash.APPLIED  # else a crash stopped it: recovery not run yet
            restored, left = revert(store.root, folder, manifest, applied, store.scan())
            try:
                folder.set_state(trash.UNDONE)
            except OSError as error:
                left.append(f"the trash could not note that this was undone: {safe_read.describe(error)}")
        store.rebuild_index()
    return Reverted(manifest, restored, left)


def _last(store: MemoryStore) -> tuple[ChangeSetFolder, Manifest]:
    """The newest set with a manifest (one without changed nothing); NothingToUndo when there is
    none or it was undone, MemoryStoreError when its manifest is not usable."""
    if (problem := store.root_problem()) is not None:
        raise MemoryStoreError(problem)
    found: tuple[ChangeSetFolder, Manifest] | None = None
    folders = trash.change_sets(store.root)
    try:
        for folder in folders:
            with contextlib.suppress(FileNotFoundError):
                found = folder, folder.read_manifest()
                break
    except (OSError, ValueError) as error:
        raise MemoryStoreError(f"cannot undo the last change: {error}") from error
    finally:
        for folder in folders:
            if found is None or folder is not found[0]:
                folder.close()
    if found is None:
        raise NothingToUndo("Nothing to undo.")
    if found[0].state == trash.UNDONE:
        found[0].close()
        raise NothingToUndo(f"The last change, {found[1].described()}, was already undone.")
    return found
