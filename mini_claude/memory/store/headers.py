"""The memory files in the folder and their headers: one stat per file, and a header read again
only when its file changed, so listing thousands of memories costs one directory scan."""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from mini_claude.core.files import safe_read
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.provenance import listed
from mini_claude.memory.store import memory_folder, saved_headers
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.naming import is_memory_file_name
from mini_claude.memory.store.validation import memory_problem

PLAIN_FIRST_LINE_BYTES = 4096  # of a file without frontmatter, read for its first line


class FileStat(NamedTuple):
    file_name: str
    mtime_ns: int
    size: int
    inode: int
    is_symlink: bool
    mode: int  # of what the name leads to (a symlink followed)
    ctime_ns: int = 0
    uid: int = 0  # its owner: one that is someone else's is not read (it may have been swapped in)


def stat_memory_files(root: Path) -> list[FileStat]:
    """Every memory file in `root` (unsorted); none when the folder is missing or must not be used."""
    found = []
    if memory_folder.escape_problem(root) is not None:
        return []
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                if not is_memory_file_name(entry.name):
                    continue
                try:
                    info = entry.stat()
                except OSError:
                    continue  # vanished between listing and stat (a concurrent delete)
                found.append(
                    FileStat(
                        entry.name,
                        info.st_mtime_ns,
                        info.st_size,
                        info.st_ino,
                        entry.is_symlink(),
                        info.st_mode,
                        info.st_ctime_ns,
                        info.st_uid,
                    )
                )
    except OSError:
        return []
    return found


def newest_first(found: FileStat) -> tuple[int, str]:
    return -found.mtime_ns, found.file_name


class HeaderCache:
    """Parsed headers of the files in `root` (memories of `scope`), each kept until its file's
    stat changes."""

    def __init__(self, root: Path, scope: str = "project") -> None:
        self.root, self.scope = root, scope
        # file name -> (its stat when read, parsed header)
        self._headers: dict[str, tuple[FileStat, MemoryFile]] = {}
        self._lock = threading.Lock()
        self._saved: saved_headers.Saved | None = None  # since use_saved: what the file holds

    def header(self, found: FileStat) -> MemoryFile:
        with self._lock:
            cached = self._headers.get(found.file_name)
        if cached is not None and _key(cached[0]) == _key(found):
            return cached[1]
        memory = self._saved_header(found) or self._read(found)
        with self._lock:
            self._headers[found.file_name] = (found, memory)
        return memory

    def use_saved(self) -> None:
        """For a process that lists every memory once (`mini-claude memory list`): take headers an
        earlier one saved (see saved_headers) for unchanged files; `save` writes them back."""
        if memory_folder.escape_problem(self.root) is None:  # a folder that leads out: never used
            self._saved = saved_headers.load(self.root)

    def save(self) -> None:
        """Save the headers looked at since `use_saved`, unless nothing changed."""
        if self._saved is None:
            return
        with self._lock:
            entries = {n: (_saved_key(f), m) for n, (f, m) in self._headers.items() if not f.is_symlink}
        if entries != self._saved:  # a file new, changed or gone since they were saved
            saved_headers.save(self.root, entries)
            self._saved = entries

    def _saved_header(self, found: FileStat) -> MemoryFile | None:
        entry = (self._saved or {}).get(found.file_name)
        if entry is None or found.is_symlink or entry[0] != _saved_key(found):
            return None
        return replace(entry[1], scope=self.scope)

    def _read(self, found: FileStat) -> MemoryFile:
        file_name, path, mtime = found.file_name, self.root / found.file_name, found.mtime_ns / 1e9
        memory = MemoryFile(file_name, path, file_name, "", "", mtime, found.size, scope=self.scope)

        if found.is_symlink and not memory_folder.holds(self.root, path):
            return replace(memory, problem="symlink pointing outside the memory directory (not read)")
        if not stat.S_ISREG(found.mode):  # a FIFO, a device: never opened
            return replace(memory, problem=f"{safe_read.kind(found.mode)}, not a file (not read)")
        if found.uid not in (os.geteuid(), 0):
            owner = safe_read.owner_name(found.uid)
            return replace(memory, problem=f"belongs to {owner}, not to you (not read)")
        header = frontmatter.read_header(path)
        if not header.has_block and not header.warnings:
            return _plain(memory)
        fields = header.fields
        return replace(
            memory,
            name=fields.get("name", "").strip() or file_name,
            description=fields.get("description", "").strip(),
            type=fields.get("type", "").strip(),
            problem=memory_problem(header),
            warnings=header.warnings,
            source=fields.get("source", ""),
            updated=fields.get("updated", ""),
            paths=listed(fields.get("paths", "")),
            expires=fields.get("expires", ""),
        )


def _plain(memory: MemoryFile) -> MemoryFile:
    """A hand-written file without frontmatter: named after the file, described by its first line
    (a heading's `#` marks dropped), a `project` memory. An empty one is no memory."""
    try:
        found = safe_read.read_text(memory.path, memory.path.parent, PLAIN_FIRST_LINE_BYTES, owner_only=True)
    except OSError as error:
        return replace(memory, problem=f"cannot be read: {safe_read.describe(error)}")
    if "\0" in found.text:
        return replace(memory, problem="not text (it holds NUL bytes), and no frontmatter")
    first = next((line.strip() for line in found.text.splitlines() if line.strip()), "")
    if not first:
        return replace(memory, problem="an empty file: nothing to remember (write a line, or delete it)")
    description = first.lstrip("#").strip() or first
    name = Path(memory.file_name).stem
    return replace(memory, name=name, description=description, type="project", plain=True)


def _key(found: FileStat) -> tuple[int, int, int]:
    """What a header is kept by within a process: a change to any of these reads it again."""
    return found.mtime_ns, found.size, found.inode


def _saved_key(found: FileStat) -> saved_headers.SavedKey:
    return found.mtime_ns, found.ctime_ns, found.size, found.inode
