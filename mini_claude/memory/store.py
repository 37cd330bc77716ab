"""The memory directory: read headers, save and delete memories, keep MEMORY.md in step.

Every change happens under an exclusive lock on `.lock` in the directory, so two sessions in the
same project never lose each other's memories from the directory or the index.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from mini_claude import safe_read
from mini_claude.atomic import write_atomic
from mini_claude.memory import frontmatter
from mini_claude.memory.index import index_line, render_index
from mini_claude.memory.naming import (
    INDEX_FILE,
    MEMORY_TYPES,
    is_memory_file_name,
    matches_garbled_name,
    memory_file_name,
    name_key,
)
from mini_claude.paths import is_within, stays_in_its_folder, visible_path

log = logging.getLogger("mini_claude")

DIR_MODE = 0o700
LOCK_FILE = ".lock"
TEMP_SUFFIX = ".tmp"  # write_atomic's temp files: `.{name}.{random}.tmp`


class _FileStat(NamedTuple):
    file_name: str
    mtime_ns: int
    size: int
    inode: int
    is_symlink: bool
    mode: int  # of what the name leads to (a symlink followed)


FileStat = _FileStat  # what `stat_files` hands out, for caches derived from the files
_StatKey = tuple[int, int, int]


class MemoryStoreError(Exception):
    """A memory could not be saved or deleted; the message says why in one line."""


@dataclass(frozen=True)
class MemoryFile:
    """One memory as its header describes it (the body is read only when needed)."""

    file_name: str
    path: Path
    name: str
    description: str
    type: str
    mtime: float
    size: int
    problem: str | None = None  # set when the file is broken: it stays on disk but out of the index
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class SavedMemory:
    path: Path
    created: bool


class MemoryStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        # file name -> (stat key, parsed header): a header is re-read only when its file changes.
        self._headers: dict[str, tuple[_StatKey, MemoryFile]] = {}
        self._headers_lock = threading.Lock()
        self._signature: tuple[_FileStat, ...] | None = None
        # file name -> (the header it was made from, its MEMORY.md line): unchanged files cost nothing.
        self._index_lines: dict[str, tuple[MemoryFile, str]] = {}

    # -- reading -------------------------------------------------------------------------------

    def owns(self, path: Path) -> bool:
        return self.root_problem() is None and is_within(path, self.root)

    def root_problem(self) -> str | None:
        """Why the memory directory must not be used at all, or None: it is a symlink pointing out
        of the folder that holds it (to `~/.ssh`, say), so nothing is read, indexed or written there."""
        if stays_in_its_folder(self.root):
            return None
        target = visible_path(os.path.realpath(self.root))
        return (
            f"the memory directory {visible_path(str(self.root))} is a symlink to {target}, outside "
            f"{visible_path(str(self.root.parent))}: memories are off until it is removed"
        )

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
        stats = self._stat_memory_files()
        stats.sort(key=_newest_first)
        if limit is not None:
            stats = stats[:limit]
        return [self._header(found) for found in stats]

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

        Only a regular file inside the memory directory is read (a symlink to one is fine), never
        blocking; else `safe_read.UnreadableFile` (an OSError) says why."""
        if (problem := self.root_problem()) is not None:
            raise safe_read.UnreadableFile(problem)
        return safe_read.read_text(memory.path, self.root, max_bytes)

    def stat_files(self) -> list[FileStat]:
        """One `os.scandir` of the memory files with their stats (what derived caches key on)."""
        return self._stat_memory_files()

    def header(self, stat: FileStat) -> MemoryFile:
        """The header of the file `stat` describes: read again only when that stat changed."""
        return self._header(stat)

    def _stat_memory_files(self) -> list[_FileStat]:
        found = []
        if self.root_problem() is not None:
            return []
        try:
            with os.scandir(self.root) as entries:
                for entry in entries:
                    if not is_memory_file_name(entry.name):
                        continue
                    try:
                        info = entry.stat()
                    except OSError:
                        continue  # vanished between listing and stat (a concurrent delete)
                    found.append(
                        _FileStat(
                            entry.name,
                            info.st_mtime_ns,
                            info.st_size,
                            info.st_ino,
                            entry.is_symlink(),
                            info.st_mode,
                        )
                    )
        except OSError:
            return []
        return found

    def _header(self, found: _FileStat) -> MemoryFile:
        key = (found.mtime_ns, found.size, found.inode)
        with self._headers_lock:
            cached = self._headers.get(found.file_name)
        if cached is not None and cached[0] == key:
            return cached[1]
        memory = self._read_header(found)
        with self._headers_lock:
            self._headers[found.file_name] = (key, memory)
        return memory

    def _read_header(self, found: _FileStat) -> MemoryFile:
        file_name, path, mtime = found.file_name, self.root / found.file_name, found.mtime_ns / 1e9
        if found.is_symlink and not self.owns(path):
            return MemoryFile(
                file_name,
                path,
                file_name,
                "",
                "",
                mtime,
                found.size,
                problem="symlink pointing outside the memory directory (not read)",
            )
        if not stat.S_ISREG(found.mode):  # a FIFO, a device: never opened
            problem = f"{safe_read.kind(found.mode)}, not a file (not read)"
            return MemoryFile(file_name, path, file_name, "", "", mtime, found.size, problem=problem)
        header = frontmatter.read_header(path)
        fields = header.fields
        problem = _header_problem(header)
        return MemoryFile(
            file_name=file_name,
            path=path,
            name=fields.get("name", "").strip() or file_name,
            description=fields.get("description", "").strip(),
            type=fields.get("type", "").strip(),
            mtime=mtime,
            size=found.size,
            problem=problem,
            warnings=header.warnings,
        )

    # -- writing -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the directory's lock (creating the directory, mode 0700, on first use)."""
        if (problem := self.root_problem()) is not None:
            raise MemoryStoreError(problem)
        try:
            self.root.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
            fd = _open_lock_file(self.root / LOCK_FILE)
        except OSError as error:
            # Name the file when it is not the directory itself (a `.lock` that is a folder, say).
            culprit = "" if error.filename in (None, str(self.root)) else f" ({Path(error.filename).name})"
            reason = "it is a file, not a directory" if self.root.is_file() else error.strerror
            raise MemoryStoreError(
                f"cannot use the memory directory {self.root}: {reason}{culprit}"
            ) from error
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def save(
        self, *, name: str, description: str, memory_type: str, body: str, target: Path | None = None
    ) -> SavedMemory:
        """Write a memory: at `target` if given (an edit), else where a memory of that name lives,
        else under a new `{type}_{slug}.md` that no other memory uses."""
        if memory_type not in MEMORY_TYPES:
            raise MemoryStoreError(f"type {memory_type!r} is not one of {', '.join(MEMORY_TYPES)}")
        header = frontmatter.format({"name": name, "description": description, "type": memory_type}, "")
        # Refuse what would read back as a broken file: it would be saved, yet missing from the index.
        header_bytes = len(header.encode("utf-8", "surrogateescape"))
        if header_bytes > frontmatter.MAX_HEADER_BYTES:
            raise MemoryStoreError(
                f"the name and description take {header_bytes} bytes, over the "
                f"{frontmatter.MAX_HEADER_BYTES}-byte header limit; keep the name short and the "
                "description to one line under ~150 chars"
            )
        problem = _header_problem(frontmatter.parse(header))
        if problem:
            raise MemoryStoreError(problem)
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
                raise MemoryStoreError(f"{target.name} points outside the memory directory; not written")
            try:
                created = write_atomic(target, text)
            except OSError as error:
                raise MemoryStoreError(f"cannot write {target.name}: {error.strerror or error}") from error
            self._rebuild_index_locked()
        return SavedMemory(target, created)

    def delete(self, memory: MemoryFile) -> None:
        with self.locked():
            try:
                memory.path.unlink()
            except FileNotFoundError:
                pass
            except OSError as error:
                raise MemoryStoreError(f"cannot delete {memory.file_name}: {error.strerror}") from error
            self._rebuild_index_locked()

    def rebuild_index(self) -> None:
        """Re-derive MEMORY.md from the files (no-op when there is no memory directory yet, or one
        not used: start-up has said why)."""
        if not self.root.is_dir() or self.root_problem() is not None:
            return
        with self.locked():
            self._rebuild_index_locked()

    def startup(self) -> None:
        """At session start: clear temp files a killed writer left, and index hand edits."""
        if (problem := self.root_problem()) is not None:
            raise MemoryStoreError(problem)
        if not self.root.is_dir():
            return
        with self.locked():
            # Writers hold the lock while their temp file exists, so any temp file now is orphaned.
            for leftover in self.root.glob(f".*{TEMP_SUFFIX}"):
                with contextlib.suppress(OSError):
                    leftover.unlink()
            self._rebuild_index_locked()

    def refresh(self) -> None:
        """Rebuild the index if any memory file appeared, vanished or changed since we last looked."""
        if self._current_signature() != self._signature:
            self.rebuild_index()

    def _current_signature(self) -> tuple[_FileStat, ...]:
        return self._signature_of(self._stat_memory_files())

    def _signature_of(self, memory_stats: list[_FileStat]) -> tuple[_FileStat, ...]:
        """Every memory file's stat plus the index's own, so a hand-written MEMORY.md is undone too."""
        stats = sorted(memory_stats)
        try:
            index = os.stat(self.root / INDEX_FILE)
            stats.append(
                _FileStat(INDEX_FILE, index.st_mtime_ns, index.st_size, index.st_ino, False, index.st_mode)
            )
        except OSError:
            pass
        return tuple(stats)

    def _rebuild_index_locked(self) -> None:
        # One directory scan serves the index and the signature: a file that changes after it
        # differs from the signature, so the next refresh() picks it up.
        stats = self._stat_memory_files()
        memories = [self._header(found) for found in sorted(stats, key=_newest_first)]
        text = render_index([m for m in memories if m.problem is None], line=self._remembered_line())
        index_path, wanted = self.root / INDEX_FILE, text.encode("utf-8")
        try:  # never more than the new index's size: a MEMORY.md that is huge is rewritten anyway
            current = safe_read.read_bytes(index_path, self.root, len(wanted), follow_symlink=False)
            unchanged = current.data == wanted and not current.was_cut
        except OSError:  # missing, or not a regular file (a symlink or FIFO there is replaced)
            unchanged = False
        if not unchanged:
            try:
                write_atomic(index_path, text)
            except OSError as error:
                raise MemoryStoreError(f"cannot write {INDEX_FILE}: {safe_read.describe(error)}") from error
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


def _open_lock_file(path: Path) -> int:
    """The lock file, opened for flock. A symlink, FIFO or device there is not our lock (we only
    ever make regular ones): it is removed and a lock made, never followed or opened."""
    with contextlib.suppress(FileNotFoundError):
        mode = os.lstat(path).st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            log.warning("replacing %s: it was %s", path, safe_read.kind(mode))
            os.unlink(path)
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    fd = os.open(path, flags, 0o600)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped in between: refuse rather than lock it
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def _newest_first(found: _FileStat) -> tuple[int, str]:
    return -found.mtime_ns, found.file_name


def _header_problem(header: frontmatter.Frontmatter) -> str | None:
    if not header.has_block:
        reason = header.warnings[0] if header.warnings else "no frontmatter block (--- … ---) at the top"
        return reason
    missing = [key for key in ("name", "description", "type") if not header.fields.get(key, "").strip()]
    if missing:
        return "frontmatter lacks " + ", ".join(missing)
    memory_type = header.fields["type"].strip()
    if memory_type not in MEMORY_TYPES:
        return f"type {memory_type!r} is not one of {', '.join(MEMORY_TYPES)}"
    return None
