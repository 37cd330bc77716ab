"""Moving a memory between scopes: `promote` (this project's → yours, in every project), `demote`
(yours, or the team's → this project's), `share` (this project's or yours → the team's folder in
the repository, to be committed). The file moves whole (its provenance and its age with it), as one
change set kept in the project's trash, so `/memory undo` moves it back.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.memory.scopes import SCOPE_NAMES, MemoryScopes
from mini_claude.memory.store.changes import Change, ChangesNotApplied
from mini_claude.memory.store.memory_file import SCOPES, MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import INDEX_FILE, memory_file_name, name_key
from mini_claude.memory.store.reverting import current_bytes
from mini_claude.safety.secrets.check import find_secret

# Where each move takes a memory of each scope.
TARGETS = {
    "promote": {"project": "user"},
    "demote": {"user": "project", "team": "project"},
    "share": {"project": "team", "user": "team"},
}
_DONE = {"promote": "the promotion", "demote": "the demotion", "share": "the sharing"}


@dataclass(frozen=True)
class Moved:
    memory: MemoryFile  # as it was
    path: Path  # where it is now
    lines: tuple[str, ...]  # what to tell the user


def move(scopes: MemoryScopes, memory: MemoryFile, action: str) -> Moved:
    """Move `memory` as `action` says; MemoryStoreError (one line) when it cannot be, nothing
    then having changed."""
    target_scope = TARGETS[action].get(memory.scope)
    if target_scope is None:
        raise MemoryStoreError(_why_not(memory, action))
    target, source = scopes.store(target_scope), scopes.store_of(memory)
    if target is None or (problem := target.root_problem()) is not None:
        raise MemoryStoreError(f"{SCOPE_NAMES[target_scope]} cannot be used: {problem}")
    if memory.problem is not None:
        raise MemoryStoreError(f"{visible_path(memory.key)} is broken ({memory.problem}): fix it first")
    data = _checked(source, memory, action)
    _free_file_name(target, memory)  # a clash is said before any folder is made or locked
    involved = {id(s): s for s in (scopes.project, source, target)}.values()
    stores = sorted(involved, key=lambda store: SCOPES.index(store.scope))  # the lock order
    with contextlib.ExitStack() as locks:
        for store in stores:
            locks.enter_context(store.locked())
        if current_bytes(source.root, memory.file_name) != data:
            raise MemoryStoreError(f"{visible_path(memory.key)} changed meanwhile: not moved")
        file_name = _free_file_name(target, memory)
        mtime_ns = os.stat(source.root / memory.file_name).st_mtime_ns
        label = f"{_DONE[action]} of {memory.file_name} to {SCOPE_NAMES[target_scope]}"
        changes = [
            Change(memory.file_name, None, scope=_in_project(memory.scope)),
            Change(file_name, data, scope=_in_project(target_scope), mtime_ns=mtime_ns),
        ]
        try:
            scopes.project.apply_changes(label, changes)
        except ChangesNotApplied as error:
            raise MemoryStoreError(f"not moved ({error.reason}): {error.outcome}") from error
        finally:
            for store in stores:
                store.rebuild_index()
    path = target.root / file_name
    return Moved(memory, path, tuple(_told(scopes, memory, path, action)))


def _checked(source: MemoryStore, memory: MemoryFile, action: str) -> bytes:
    """The memory's bytes; MemoryStoreError when it is gone, unreadable, or (to be shared, so
    committed) holds a secret."""
    try:
        data = current_bytes(source.root, memory.file_name)
    except OSError as error:
        raise MemoryStoreError(
            f"{visible_path(memory.key)} cannot be read: {safe_read.describe(error)}"
        ) from error
    if data is None:
        raise MemoryStoreError(f"{visible_path(memory.key)} is gone")
    if action == "share" and (secret := find_secret(data.decode("utf-8", "replace"))):
        raise MemoryStoreError(
            f"not shared: it looks like it holds {secret}, and the team's folder is committed"
        )
    return data


def _why_not(memory: MemoryFile, action: str) -> str:
    if action == "share" and memory.scope == "team":
        return f"{memory.name!r} is shared with the team already"
    other = {"promote": "demote", "demote": "promote", "share": "demote"}[action]
    past = {"promote": "promoted", "demote": "demoted", "share": "shared"}[action]
    return (
        f"{memory.name!r} is in {SCOPE_NAMES[memory.scope]}: it cannot be {past} "
        f"(/memory {other} moves it the other way)"
    )


def _free_file_name(target: MemoryStore, memory: MemoryFile) -> str:
    """The memory's file name in `target`, or another when taken; MemoryStoreError when a memory of
    its name is there already (two memories of one name in one scope would be ambiguous)."""
    clash = [m for m in target.scan() if m.problem is None and name_key(m.name) == name_key(memory.name)]
    if clash:
        raise MemoryStoreError(
            f"{SCOPE_NAMES[target.scope]} has a memory named {memory.name!r} already "
            f"({visible_path(clash[0].file_name)}): remove or rename one of them first"
        )
    try:
        taken = {entry.casefold() for entry in os.listdir(target.root)}
    except FileNotFoundError:
        taken = set()
    if memory.file_name.casefold() not in taken | {INDEX_FILE.casefold()}:
        return memory.file_name
    return memory_file_name(memory.type or "project", memory.name, taken | {INDEX_FILE.casefold()})


def _told(scopes: MemoryScopes, memory: MemoryFile, path: Path, action: str) -> list[str]:
    where = SCOPE_NAMES[TARGETS[action][memory.scope]]
    lines = [f"Moved {memory.name!r} to {where}: {visible_path(str(path))}. /memory undo moves it back."]
    if action == "share":
        lines.append("It is in the repository now: commit it (git add .mini-claude/memory) to share it.")
        if not scopes.team_trusted:
            lines.append(
                "Team memories load only in a folder you trust: this one is not, so it is not used here."
            )
    return lines


def _in_project(scope: str) -> str:
    """A change's scope as the project's change set names it ("" its own folder)."""
    return "" if scope == "project" else scope
