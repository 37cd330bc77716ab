"""The memory directory: read headers, save and delete memories, keep MEMORY.md in step.

Every change happens under an exclusive lock on `.lock` in the directory, so two sessions in the
same project never lose each other's memories from the directory or the index.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

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
from mini_claude.paths import is_within

DIR_MODE = 0o700
LOCK_FILE = ".lock"
TEMP_SUFFIX = ".tmp"  # write_atomic's temp files: `.{name}.{random}.tmp`


class _FileStat(NamedTuple):
    file_name: str
    mtime_ns: int
    size: int
    inode: int
    is_symlink: bool


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
        return is_within(path, self.root)

    def has_memories(self) -> bool:
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
        return [self._header(stat) for stat in stats]

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

    def read_text(self, memory: MemoryFile, max_bytes: int | None = None) -> tuple[str, bool]:
        """The file's text (bad bytes replaced), at most `max_bytes` of it; and whether it was cut."""
        with memory.path.open("rb") as handle:
            data = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
        was_cut = max_bytes is not None and len(data) > max_bytes
        if was_cut:
            data = data[:max_bytes]
            # Back off to a character boundary so the cut never leaves half a character.
            end = len(data)
            while end > 0 and data[end - 1] & 0xC0 == 0x80:
                end -= 1
            if end > 0 and data[end - 1] >= 0xC0:
                end -= 1
            data = data[:end]
        return data.decode("utf-8", errors="replace").removeprefix("\ufeff"), was_cut

    def _stat_memory_files(self) -> list[_FileStat]:
        found = []
        try:
            with os.scandir(self.root) as entries:
                for entry in entries:
                    if not is_memory_file_name(entry.name):
                        continue
                    try:
                        stat = entry.stat()
                    except OSError:
                        continue  # vanished between listing and stat (a concurrent delete)
                    found.append(
                        _FileStat(entry.name, stat.st_mtime_ns, stat.st_size, stat.st_ino, entry.is_symlink())
                    )
        except OSError:
            return []
        return found

    def _header(self, stat: _FileStat) -> MemoryFile:
        key = (stat.mtime_ns, stat.size, stat.inode)
        with self._headers_lock:
            cached = self._headers.get(stat.file_name)
        if cached is not None and cached[0] == key:
            return cached[1]
        memory = self._read_header(stat)
        with self._headers_lock:
            self._headers[stat.file_name] = (key, memory)
        return memory

    def _read_header(self, stat: _FileStat) -> MemoryFile:
        file_name, path, mtime = stat.file_name, self.root / stat.file_name, stat.mtime_ns / 1e9
        if stat.is_symlink and not self.owns(path):
            return MemoryFile(
                file_name,
                path,
                file_name,
                "",
                "",
                mtime,
                stat.size,
                problem="symlink pointing outside the memory directory (not read)",
            )
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
            size=stat.size,
            problem=problem,
            warnings=header.warnings,
        )

    # -- writing -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the directory's lock (creating the directory, mode 0700, on first use)."""
        try:
            self.root.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
            fd = os.open(self.root / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
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
                    taken = {m.file_name.casefold() for m in memories} | {INDEX_FILE.casefold()}
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
        """Re-derive MEMORY.md from the files (no-op when there is no memory directory yet)."""
        if not self.root.is_dir():
            return
        with self.locked():
            self._rebuild_index_locked()

    def startup(self) -> None:
        """At session start: clear temp files a killed writer left, and index hand edits."""
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
            stats.append(_FileStat(INDEX_FILE, index.st_mtime_ns, index.st_size, index.st_ino, False))
        except OSError:
            pass
        return tuple(stats)

    def _rebuild_index_locked(self) -> None:
        # One directory scan serves the index and the signature: a file that changes after it
        # differs from the signature, so the next refresh() picks it up.
        stats = self._stat_memory_files()
        memories = [self._header(stat) for stat in sorted(stats, key=_newest_first)]
        text = render_index([m for m in memories if m.problem is None], line=self._remembered_line())
        index_path = self.root / INDEX_FILE
        try:
            current = index_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current != text:
            write_atomic(index_path, text)
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


def _newest_first(stat: _FileStat) -> tuple[int, str]:
    return -stat.mtime_ns, stat.file_name


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
