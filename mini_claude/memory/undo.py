"""`/memory undo`: revert the last change set (a tidy, a `/memory rm`, a save, a memory moved
between scopes), whichever scope's folder keeps it, each file only while it is as the set left it
(memory/store/reverting.py says how), under the locks of every folder it touches (taken in one
order: memory_file.SCOPES'); their indexes follow."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.memory.scopes import MemoryScopes
from mini_claude.memory.store import trash
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.reverting import revert
from mini_claude.memory.store.trash import ChangeSetFolder, Manifest


class NothingToUndo(MemoryStoreError):
    """No change set to undo, or the last one was undone already; the message says which."""


@dataclass
class Reverted:
    manifest: Manifest
    restored: list[str]  # one line per file put back
    left: list[str]  # one line per file left as it is, and why


def last_change(memories: MemoryScopes | MemoryStore) -> tuple[str, str]:
    """The last change set's id and what it was, e.g. `the tidy (2026-03-01 14:02, 3 changes)`."""
    _, folder, manifest = _last(MemoryScopes.of(memories))
    folder.close()
    return folder.id, manifest.described()


def undo_last(memories: MemoryScopes | MemoryStore, expected: str | None = None) -> Reverted:
    """Revert the last change set; when `expected` (the id the user was asked about) is not the
    last any more (another session changed a memory meanwhile), MemoryStoreError and nothing is done."""
    scopes = MemoryScopes.of(memories)
    with contextlib.ExitStack() as locks:
        for store in (s for s in scopes.stores() if s.root.is_dir()):  # SCOPES' order: the lock order
            locks.enter_context(store.locked())
        store, folder, manifest = _last(scopes)
        with folder:
            if expected is not None and folder.id != expected:
                raise MemoryStoreError(
                    f"the last change is now {manifest.described()}, made since you were asked; "
                    "nothing was undone"
                )
            applied = folder.state == trash.APPLIED  # else a crash stopped it: recovery not run yet
            restored, left = revert(
                store.root, folder, manifest, applied, scopes.scan(), roots=store.peers, own=store.scope
            )
            try:
                folder.set_state(trash.UNDONE)
            except OSError as error:
                left.append(f"the trash could not note that this was undone: {safe_read.describe(error)}")
        for each in scopes.stores():
            each.rebuild_index()
    return Reverted(manifest, restored, left)


def _last(scopes: MemoryScopes) -> tuple[MemoryStore, ChangeSetFolder, Manifest]:
    """The newest set with a manifest (one without changed nothing) of any scope's trash;
    NothingToUndo when there is none or it was undone, MemoryStoreError when its manifest is not
    usable."""
    if (problem := scopes.project.root_problem()) is not None:
        raise MemoryStoreError(problem)
    candidates = [(folder, store) for store in scopes.stores() for folder in trash.change_sets(store.root)]
    candidates.sort(key=lambda pair: pair[0].id, reverse=True)  # ids begin with the UTC time
    found: tuple[MemoryStore, ChangeSetFolder, Manifest] | None = None
    try:
        for folder, store in candidates:
            with contextlib.suppress(FileNotFoundError):
                found = store, folder, folder.read_manifest()
                break
    except (OSError, ValueError) as error:
        raise MemoryStoreError(f"cannot undo the last change: {error}") from error
    finally:
        for folder, _ in candidates:
            if found is None or folder is not found[1]:
                folder.close()
    if found is None:
        raise NothingToUndo("Nothing to undo.")
    if found[1].state == trash.UNDONE:
        found[1].close()
        raise NothingToUndo(f"The last change, {found[2].described()}, was already undone.")
    return found
