"""The memory directory: list and find memories, save and delete them, keep MEMORY.md in step.

Every change happens under the folder's exclusive lock (see `memory_folder.exclusive_lock`), so two
sessions in the same project never lose each other's memories from the directory or the index.
A change to an existing memory (a save over it, a deletion, a tidy) is a change set (changes.py):
its old version goes to the trash first, and `/memory undo` (memory/undo.py) reverts the last one.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.files.private_files import FILE_MODE, OTHERS_BITS, make_private
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.provenance import Provenance, stamped
from mini_claude.memory.store import memory_folder
from mini_claude.memory.store.changes import Change, ChangesNotApplied, apply_changes, recover
from mini_claude.memory.store.headers import HeaderCache, newest_first, stat_memory_files
from mini_claude.memory.store.index import IndexFile
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.naming import (
    INDEX_FILE,
    is_memory_file_name,
    matches_garbled_name,
    memory_file_name,
    name_key,
)
from mini_claude.memory.store.reverting import current_bytes, digest_of
from mini_claude.memory.store.validation import check_memory

TEMP_SUFFIX = ".tmp"  # write_atomic's temp files: `.{name}.{random}.tmp`
NO_FILE = ""  # a save's `expect` when there must be no file yet
_WHO = {"model": "the model's ", "user": "your ", "tidy": "the tidy's ", "import": "the import's "}
NARROW_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class SavedMemory:
    path: Path
    created: bool


class MemoryStore:
    """One folder of memories, of one scope (memory_file.SCOPES); memory/scopes.py puts them together."""

    def __init__(self, root: Path, scope: str = "project") -> None:
        self.root = Path(root)
        self.scope = scope
        # Why its memories are not used although the folder is fine (another repository at the
        # project's path: memory/identity.py), set at start-up; None while they are.
        self.withheld: str | None = None
        # The folders of the scopes a change set of this folder may change too (memory/scopes.py
        # sets them: a memory moved from the project to the user's own is one set).
        self.peers: dict[str, Path] = {scope: self.root}
        # The header of each memory file, read again only when its stat changed.
        self.headers = HeaderCache(self.root, scope)
        self._index = IndexFile(self.root, self.headers)

    # -- reading -------------------------------------------------------------------------------

    def owns(self, path: Path) -> bool:
        return memory_folder.holds(self.root, path)

    def root_problem(self) -> str | None:
        """Why the memory directory must not be used at all (see `memory_folder.escape_problem`),
        or why its memories are withheld; None when it may be used."""
        return memory_folder.escape_problem(self.root) or self.withheld

    def has_memories(self) -> bool:
        if self.root_problem() is not None:
            return False
        try:
            with os.scandir(self.root) as entries:
                return any(is_memory_file_name(entry.name) for entry in entries)
        except OSError:
            return False

    def scan(self, limit: int | None = None) -> list[MemoryFile]:
        """Memories newest first (at most `limit`), broken ones included and flagged."""
        stats = stat_memory_files(self.root)
        stats.sort(key=newest_first)
        if limit is not None:
            stats = stats[:limit]
        return [self.headers.header(found) for found in stats]

    def find(self, query: str) -> list[MemoryFile]:
        """Memories whose name or file name matches `query`: exact names first, then names exact
        but for U+FFFD (see `matches_garbled_name`), then prefixes of either kind."""
        memories = self.scan()
        key, typed = name_key(query), query.casefold()
        stem = typed.removesuffix(".md")
        tiers: tuple[Callable[[MemoryFile], bool], ...] = (
            lambda m: name_key(m.name) == key or m.file_name.casefold() == typed,
            lambda m: matches_garbled_name(m.name, query, prefix=False),
            lambda m: (
                name_key(m.name).startswith(key)
                or matches_garbled_name(m.name, query, prefix=True)
                or m.file_name.casefold().startswith(stem)
            ),
        )
        for matches in tiers:
            found = [m for m in memories if matches(m)]
            if found:
                return found
        return []

    def read_text(self, memory: MemoryFile, max_bytes: int) -> safe_read.FileText:
        """At most `max_bytes` of the file's text (bad bytes replaced), whether it was cut, its size.

        Only a regular file of ours inside the memory directory is read (a symlink to one is
        fine), never blocking; else `safe_read.UnreadableFile` (an OSError) says why."""
        if (problem := self.root_problem()) is not None:
            raise safe_read.UnreadableFile(problem)
        return safe_read.read_text(memory.path, self.root, max_bytes, owner_only=True)

    # -- writing -------------------------------------------------------------------------------

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """Hold the directory's lock (creating the directory, mode 0700, on first use); a folder
        whose memories are withheld is not written either. The team's folder, in a repository,
        gets a `.gitignore` first: its lock, index, caches and trash are not for sharing."""
        if self.withheld is not None:
            raise MemoryStoreError(self.withheld)
        if self.scope == "team":
            memory_folder.ignore_derived_files(self.root)
        return memory_folder.exclusive_lock(self.root)

    def save(
        self,
        *,
        name: str,
        description: str,
        memory_type: str,
        body: str,
        target: Path | None = None,
        extra: Mapping[str, str] | None = None,
        by: Provenance | None = None,
        expect: str | None = None,
        now: float | None = None,
    ) -> SavedMemory:
        """Write a memory: at `target` if given (an edit), else where a memory of that name lives,
        else under a new `{type}_{slug}.md` that no other memory uses; as a change set either way
        (`/memory undo` takes back a new memory too). `extra` holds the other fields kept (paths,
        expires); `by` who writes it (see provenance.py; None writes the fields alone). `expect`:
        the digest the file must still have (NO_FILE: there must be none), else nothing is written."""
        fields = check_memory(name, description, memory_type, body, extra)
        with self.locked():
            target = self._target(name, memory_type, target)
            try:
                current = current_bytes(self.root, target.name)
                if expect is not None and (digest_of(current) if current is not None else NO_FILE) != expect:
                    changed = prompts.notice("memory_changed_meanwhile", file=target.name)
                else:
                    changed = None
                    previous = frontmatter.parse(current).fields if current is not None else None
                    text = frontmatter.format(fields, body)
                    if by is not None:
                        text = stamped(fields, body, by, previous, time.time() if now is None else now)
                    data = text.encode("utf-8", "surrogateescape")
                    label = _label(by, target.name, created=current is None)
                    apply_changes(self.root, label, [Change(target.name, data)], roots=self.peers)
            except (OSError, MemoryStoreError) as error:
                why = error.reason if isinstance(error, ChangesNotApplied) else _reason(error)
                reason = prompts.notice("memory_write_failed", file=target.name, error=why)
                raise MemoryStoreError(reason) from error
            finally:
                self._index.rebuild()
            if changed is not None:
                raise MemoryStoreError(changed)
        return SavedMemory(target, current is None)

    def target_for(
        self, name: str, memory_type: str, target: Path | None = None
    ) -> tuple[Path, bytes | None]:
        """Where a save of `name` would go, and the bytes there now (None: a new file): what a write
        is judged by before it is made (the save's `expect` then holds it to them)."""
        with self.locked():  # the folder made, or why it cannot be, said once and first
            target = self._target(name, memory_type, target)
            try:
                return target, current_bytes(self.root, target.name)
            except OSError as error:
                reason = prompts.notice("memory_write_failed", file=target.name, error=_reason(error))
                raise MemoryStoreError(reason) from error

    def _target(self, name: str, memory_type: str, target: Path | None) -> Path:
        if target is None:
            key = name_key(name)
            same_name = [m for m in self.scan() if m.problem is None and name_key(m.name) == key]
            if same_name:
                target = same_name[0].path
            else:
                # Every name in the folder, not only the memories: a dangling symlink or a FIFO
                # there is not one, yet a new memory must not land on it.
                taken = {entry.casefold() for entry in os.listdir(self.root)}
                target = self.root / memory_file_name(memory_type, name, taken | {INDEX_FILE.casefold()})
        in_folder = os.path.realpath(target.parent) == os.path.realpath(self.root)
        if not (in_folder and self.owns(target)):
            raise MemoryStoreError(prompts.notice("memory_target_outside", file=target.name))
        return target

    def delete(self, memory: MemoryFile) -> None:
        """Delete the memory's file, kept in the trash (`undo_last` brings it back)."""
        self.apply_changes(f"the deletion of {memory.file_name}", [Change(memory.file_name, None)])

    def apply_changes(self, label: str, changes: list[Change]) -> Path | None:
        """Apply `changes` as one change set (see changes.py): the trash folder keeping what they
        replaced, or None when nothing changed. ChangesNotApplied when nothing of them stands.
        The caller holds the locks of other scopes' folders it changes, and rebuilds their index."""
        with self.locked():
            try:
                return apply_changes(self.root, label, changes, roots=self.peers)
            finally:
                self._index.rebuild()

    def rebuild_index(self) -> None:
        """Re-derive MEMORY.md from the files (no-op when there is no memory directory yet, or one
        not used: start-up has said why)."""
        if not self.root.is_dir() or self.root_problem() is not None:
            return
        with self.locked():
            self._index.rebuild()

    def startup(self) -> list[str]:
        """At session start: clear temp files a killed writer left, finish or revert a change set
        a crash left half-applied (one line each, saying which), make private the memories an
        older version left open to others (under umask 000, anyone could have edited them), and
        index hand edits."""
        if (problem := self.root_problem()) is not None:
            raise MemoryStoreError(problem)
        if not self.root.is_dir():
            return []
        with self.locked():
            # Writers hold the lock while their temp file exists, so any temp file now is orphaned.
            for leftover in self.root.glob(f".*{TEMP_SUFFIX}"):
                with contextlib.suppress(OSError):
                    leftover.unlink()
            lines = recover(self.root, self.peers)
            if self.scope != "team":  # the team's are the repository's files, as git checked them out
                for found in stat_memory_files(self.root):
                    if found.mode & OTHERS_BITS and not found.is_symlink:  # an older version's umask
                        with contextlib.suppress(OSError):  # a hard link, a FIFO: left alone, not ours
                            make_private(self.root / found.file_name, NARROW_FLAGS, FILE_MODE)
            self._index.rebuild()
        return lines

    def refresh(self) -> None:
        """Rebuild the index if any memory file appeared, vanished or changed since we last looked."""
        if self._index.current_signature() != self._index.signature:
            self.rebuild_index()


def _reason(error: OSError | MemoryStoreError) -> str:
    return safe_read.describe(error) if isinstance(error, OSError) else str(error)


def _label(by: Provenance | None, file_name: str, *, created: bool) -> str:
    """How undo names a save: `the model's new memory user_role.md`, `the update of user_role.md`."""
    who = _WHO.get(by.source, "the ") if by is not None else "the "
    return f"{who}{'new memory' if created else 'update of'} {file_name}"
