"""Parsed headers kept between processes, so `mini-claude memory list` over 10,000 memories reads
one file instead of 10,000 headers.

`.header-cache.json` beside the memories is derived and deletable, like the ranking index: the
files stay the truth. An entry is used only while its file's mtime, ctime, size and inode are all
unchanged (ctime cannot be set back by hand, so an edit that keeps the mtime and the size is still
seen), never for a symlink (where it leads is judged again each time), and a cache that is not
exactly what this module writes is ignored and written again.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import write_atomic
from mini_claude.memory.store.memory_file import MemoryFile

HEADERS_FILE = ".header-cache.json"
HEADERS_MAX_BYTES = 64_000_000  # ~400 bytes a memory: far past any real folder
FORMAT = 2  # 1 had no provenance, paths or expiry

# (mtime_ns, ctime_ns, size, inode)
SavedKey = tuple[int, int, int, int]
Saved = dict[str, tuple[SavedKey, MemoryFile]]

log = logging.getLogger("mini_claude.memory")


def load(root: Path) -> Saved:
    """The saved headers of `root`'s files by file name; empty when there are none or they are
    not readable as written."""
    try:
        data = safe_read.read_bytes(
            root / HEADERS_FILE, root, HEADERS_MAX_BYTES, follow_symlink=False, owner_only=True
        )
        if data.was_cut:
            return {}
        saved = json.loads(data.data)
        if not (isinstance(saved, dict) and saved.get("format") == FORMAT):
            return {}
        return dict(_entry(root, row) for row in saved["headers"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        if not isinstance(error, FileNotFoundError):
            log.info("saved headers not used: %s", error)
        return {}


def save(root: Path, entries: Saved) -> None:
    """Write `entries` as the folder's saved headers; a failure only costs the next list its speed."""
    rows = [
        [name, *key, m.name, m.description, m.type, m.problem, list(m.warnings), *_extra(m)]
        for name, (key, m) in sorted(entries.items())
    ]
    # ASCII: a garbled file name's lone surrogates are written as \udcxx escapes and read back whole.
    text = json.dumps({"format": FORMAT, "headers": rows}, separators=(",", ":"))
    try:
        if root.is_dir():
            write_atomic(root / HEADERS_FILE, text, mode=0o600)
    except (OSError, ValueError) as error:
        log.info("saved headers not written: %s", error)


def _extra(m: MemoryFile) -> list[Any]:
    return [m.source, m.updated, list(m.paths), m.expires, m.plain]


def _entry(root: Path, row: Any) -> tuple[str, tuple[SavedKey, MemoryFile]]:
    file_name, mtime_ns, ctime_ns, size, inode, name, description, kind, problem, warnings, *extra = row
    source, updated, paths, expires, plain = extra
    numbers = (mtime_ns, ctime_ns, size, inode)
    texts = (file_name, name, description, kind, source, updated, expires)
    if not all(type(n) is int for n in numbers) or not all(type(t) is str for t in texts):
        raise TypeError("a saved header is not as written")
    if problem is not None and type(problem) is not str:
        raise TypeError("a saved header's problem is not as written")
    lists = (warnings, paths)
    if not all(isinstance(items, list) and all(type(i) is str for i in items) for items in lists):
        raise TypeError("a saved header's lists are not as written")
    if type(plain) is not bool:
        raise TypeError("a saved header is not as written")
    memory = MemoryFile(
        file_name, root / file_name, name, description, kind, mtime_ns / 1e9, size, problem, tuple(warnings),
        source=source, updated=updated, paths=tuple(paths), expires=expires, plain=plain,
    )  # fmt: skip
    return file_name, ((mtime_ns, ctime_ns, size, inode), memory)
