"""The memory directory: list and find memories, save and delete them, keep MEMORY.md in step.

Every change happens under the folder's exclusive lock (see `memory_folder.exclusive_lock`), so two
sessions in the same project never lose each other's memories from the directory or the index.
A change to an existing memory (a save over it, a deletion, a tidy) is a change set (changes.py):
its old version goes to the trash first, and `/memory undo` (memory/undo.py) reverts the last one.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.errors import InvalidMemory, MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.files.private_files import FILE_MODE, OTHERS_BITS, make_private
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.store import memory_folder
from mini_claude.memory.store.changes import Change, ChangesNotApplied, apply_changes, recover
from mini_claude.memory.store.headers import FileStat, HeaderCache, newest_first, stat_memory_files
from mini_claude.memory.store.index import index_line, render_index
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.naming import (
    INDEX_FILE,
    is_memory_file_name,
    matches_garbled_name,
    memory_file_name,
    name_key,
)
from mini_claude.memory.store.validation import memory_problem

TEMP_SUFFIX = ".tmp"  # write_atomic's temp files: `.{name}.{random}.tmp`
NARROW_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

# MemoryFile (memory_file.py) and MemoryStoreError (core/errors.py) are what the store hands out and raises.
__all__ = ["FileStat", "MemoryFile", "MemoryStore", "MemoryStoreError", "SavedMemory"]


@dataclass(frozen=True)
class SavedMemory:
    path: Path
    created: bool


class MemoryStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._headers = HeaderCache(self.root)
        self._signature: tuple[FileStat, ...] | None = None
        # file name -> (the header it was made from, its MEMORY.md line): unchanged files cost nothing.
        self._index_lines: dict[str, tuple[MemoryFile, str]] = {}

    # -- reading -------------------------------------------------------------------------------

    def owns(self, path: Path) -> bool:
        return memory_folder.holds(self.root, path)

    def root_problem(self) -> str | None:
        """Why the memory directory must not be used at all (see `memory_folder.escape_problem`), or None."""
        return memory_folder.escape_problem(self.root)

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
        return [self._headers.header(found) for found in stats]

    def use_saved_headers(self) -> None:
        """For a process that lists every memory once (`mini-claude memory list`): headers an
        earlier one saved are taken for unchanged files (see memory/store/saved_headers.py)."""
        self._headers.use_saved()

    def save_headers(self) -> None:
        self._headers.save()

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

    def stat_files(self) -> list[FileStat]:
        """One `os.scandir` of the memory files with their stats (what derived caches key on)."""
        return stat_memory_files(self.root)

    def header(self, found: FileStat) -> MemoryFile:
        """The header of the file `found` describes: read again only when that stat changed."""
        return self._headers.header(found)

    # -- writing -------------------------------------------------------------------------------

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """Hold the directory's lock (creating the directory, mode 0700, on first use)."""
        return memory_folder.exclusive_lock(self.root)

    def save(
        self, *, name: str, description: str, memory_type: str, body: str, target: Path | None = None
    ) -> SavedMemory:
        """Write a memory: at `target` if given (an edit), else where a memory of that name lives,
        else under a new `{type}_{slug}.md` that no other memory uses."""
        # Checked as given: a value that is not blank stays so in the file (`format` only folds line
        # breaks), and a type with a stray space is refused rather than trimmed. The size counts the
        # header as written: one too long to read back would be saved, yet missing from the index.
        given = {"name": name, "description": description, "type": memory_type}
        header = frontmatter.format(given, "")
        header_bytes = len(header.encode("utf-8", "surrogateescape"))
        if problem := memory_problem(
            frontmatter.Frontmatter(given, has_block=True), header_bytes=header_bytes
        ):
            raise InvalidMemory(problem)
        if "\0" in body:  # it would read back as binary, and so never be recalled or shown
            raise InvalidMemory(prompts.notice("memory_holds_nul"))
        text = header + body
        with self.locked():
            memories = self.scan()
            if target is None:
                key = name_key(name)
                same_name = [m for m in memories if m.problem is None and name_key(m.name) == key]
                if same_name:
                    target = same_name[0].path
                else:
                    # Every name in the folder, not only the memories: a dangling symlink or a FIFO
                    # there is not one, yet a new memory must not land on it.
                    taken = {entry.casefold() for entry in os.listdir(self.root)} | {INDEX_FILE.casefold()}
                    target = self.root / memory_file_name(memory_type, name, taken)
            if not self.owns(target):
                raise MemoryStoreError(prompts.notice("memory_target_outside", file=target.name))
            try:
                created = self._write(target, text)
            except (OSError, ChangesNotApplied) as error:
                why = error.reason if isinstance(error, ChangesNotApplied) else error.strerror or error
                reason = prompts.notice("memory_write_failed", file=target.name, error=why)
                raise MemoryStoreError(reason) from error
            self._rebuild_index_locked()
        return SavedMemory(target, created)

    def _write(self, target: Path, text: str) -> bool:
        """Write a memory file; over an existing one, as a change set (undo puts the old one back)."""
        in_folder = os.path.realpath(target.parent) == os.path.realpath(self.root)
        if not (in_folder and os.path.lexists(target)):
            return write_atomic(target, text)
        data = text.encode("utf-8", "surrogateescape")
        apply_changes(self.root, f"the update of {target.name}", [Change(target.name, data)])
        return False

    def delete(self, memory: MemoryFile) -> None:
        """Delete the memory's file, kept in the trash (`undo_last` brings it back)."""
        self.apply_changes(f"the deletion of {memory.file_name}", [Change(memory.file_name, None)])

    def apply_changes(self, label: str, changes: list[Change]) -> Path | None:
        """Apply `changes` as one change set (see changes.py): the trash folder keeping what they
        replaced, or None when nothing changed. ChangesNotApplied when nothing of them stands."""
        with self.locked():
            try:
                return apply_changes(self.root, label, changes)
            finally:
                self._rebuild_index_locked()

    def rebuild_index(self) -> None:
        """Re-derive MEMORY.md from the files (no-op when there is no memory directory yet, or one
        not used: start-up has said why)."""
        if not self.root.is_dir() or self.root_problem() is not None:
            return
        with self.locked():
            self._rebuild_index_locked()

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
            lines = recover(self.root)
            for found in stat_memory_files(self.root):
                if found.mode & OTHERS_BITS and not found.is_symlink:  # an older version's umask
                    with contextlib.suppress(OSError):  # a hard link, a FIFO: left alone, not ours
                        make_private(self.root / found.file_name, NARROW_FLAGS, FILE_MODE)
            self._rebuild_index_locked()
        return lines

    def refresh(self) -> None:
        """Rebuild the index if any memory file appeared, vanished or changed since we last looked."""
        if self._current_signature() != self._signature:
            self.rebuild_index()

    def _current_signature(self) -> tuple[FileStat, ...]:
        return self._signature_of(stat_memory_files(self.root))

    def _signature_of(self, memory_stats: list[FileStat]) -> tuple[FileStat, ...]:
        """Every memory file's stat plus the index's own, so a hand-written MEMORY.md is undone too."""
        stats = sorted(memory_stats)
        try:
            index = os.stat(self.root / INDEX_FILE)
            stats.append(
                FileStat(INDEX_FILE, index.st_mtime_ns, index.st_size, index.st_ino, False, index.st_mode)
            )
        except OSError:
            pass
        return tuple(stats)

    def _rebuild_index_locked(self) -> None:
        # One directory scan serves the index and the signature: a file that changes after it
        # differs from the signature, so the next refresh() picks it up.
        stats = stat_memory_files(self.root)
        memories = [self._headers.header(found) for found in sorted(stats, key=newest_first)]
        text = render_index([m for m in memories if m.problem is None], line=self._remembered_line())
        index_path, wanted = self.root / INDEX_FILE, text.encode("utf-8")
        try:  # never more than the new index's size: a MEMORY.md that is huge is rewritten anyway
            current = safe_read.read_bytes(
                index_path, self.root, len(wanted), follow_symlink=False, owner_only=True
            )
            unchanged = current.data == wanted and not current.was_cut
        except OSError:  # missing, not a regular file of ours (a symlink, a FIFO): replaced
            unchanged = False
        if not unchanged:
            try:
                write_atomic(index_path, text)
            except OSError as error:
                reason = prompts.notice(
                    "memory_write_failed", file=INDEX_FILE, error=safe_read.describe(error)
                )
                raise MemoryStoreError(reason) from error
        self._signature = self._signature_of(stats)

    def _remembered_line(self) -> Callable[[MemoryFile], str]:
        """`index_line`, made again only for headers read since the last rebuild."""
        previous, self._index_lines = self._index_lines, {}

        def line(memory: MemoryFile) -> str:
            made_from, text = previous.get(memory.file_name, (None, ""))
            if made_from is not memory:
                text = index_line(memory)
            self._index_lines[memory.file_name] = (memory, text)
            return text

        return line
