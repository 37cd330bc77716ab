"""The ranking index kept in step with the memory files: one row of terms per memory, one per day
(all that day's memories together), brought up to date from the files' stats at every ranking.

Apart from ranking.py, which asks the index; this is what fills it. The index lives in memory
(SQLite `:memory:`) and is loaded from and saved to its file by ranking_index.py.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sqlite3
import stat as stat_module
from pathlib import Path
from typing import NamedTuple

from mini_claude.core.files.text_decoding import decode_text
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.recall.ranking_index import check_schema, create_schema, read_index
from mini_claude.memory.recall.terms import document_text
from mini_claude.memory.store.memory_store import FileStat, MemoryFile, MemoryStore

BODY_INDEXED_CHARS = 600  # a body's first lines name what it is about; the rest adds size, not recall
# The frontmatter block, to skip it cheaply (the store has parsed it already; a near miss only
# puts a few header words in the body column too).
_FRONT_BLOCK = re.compile(r"\A\s*---[ \t]*\r?\n.*?^[ \t]*---[ \t]*$", re.DOTALL | re.MULTILINE)
_DAY_TEXT = (
    "SELECT terms.name, terms.description, terms.type, terms.body FROM files"
    " JOIN terms ON terms.rowid = files.id WHERE files.day = ?"
)

_StatKey = tuple[int, int, int]


class IndexedFile(NamedTuple):
    key: _StatKey  # the stat it was indexed at: (mtime_ns, size, inode)
    row_id: int
    usable: bool  # offered at all (a broken file is known, so it is not read again, but not offered)
    day: int
    mtime_ns: int


class IndexMirror:
    """The in-memory index of one memory folder and, beside it, what its files table says."""

    def __init__(self, store: MemoryStore, path: Path, memories: int, *, load: bool) -> None:
        """An empty index, or (`load`) the one saved at `path`: raises sqlite3.Error, OSError or
        IndexUnusable when that file cannot serve."""
        self.store = store
        self.db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self.files: dict[str, IndexedFile] = {}
        self.by_row: dict[int, str] = {}
        try:
            if load:
                self._load(path, memories)
            else:
                create_schema(self.db)
        except BaseException:
            self.db.close()
            raise

    def _load(self, path: Path, memories: int) -> None:
        data = read_index(path, memories)
        if data is None:
            create_schema(self.db)
            return
        self.db.deserialize(data)
        check_schema(self.db)
        for row_id, name, mtime_ns, size, inode, usable, day in self.db.execute(
            "SELECT id, file_name, mtime_ns, size, inode, usable, day FROM files"
        ):
            self.files[name] = IndexedFile((mtime_ns, size, inode), row_id, bool(usable), day, mtime_ns)
            self.by_row[row_id] = name

    def close(self) -> None:
        self.db.close()

    def sync(self, stats: dict[str, FileStat]) -> bool:
        """Bring the index up to the files' stats; True when anything changed."""
        gone = [name for name in self.files if name not in stats]
        stale = [stat for stat in stats.values() if self._changed(stat)]
        if not gone and not stale:
            return False
        days: set[int] = set()
        self.db.execute("BEGIN")
        try:
            for name in gone:
                known = self.files.pop(name)
                del self.by_row[known.row_id]
                days.add(known.day)
                self.db.execute("DELETE FROM files WHERE id = ?", (known.row_id,))
                self.db.execute("DELETE FROM terms WHERE rowid = ?", (known.row_id,))
            for stat in stale:
                days.update(self._index(stat))
            for day in days:
                self._rebuild_day(day)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return True

    def _changed(self, stat: FileStat) -> bool:
        known = self.files.get(stat.file_name)
        return known is None or known.key != _key(stat)

    def _index(self, stat: FileStat) -> set[int]:
        """Index one new or changed file; returns the days whose text changed."""
        memory = self.store.header(stat)
        usable = memory.problem is None
        previous = self.files.get(stat.file_name)
        if previous is not None:
            self.db.execute("DELETE FROM terms WHERE rowid = ?", (previous.row_id,))
        day = day_of(stat.mtime_ns)
        row = (stat.file_name, stat.mtime_ns, stat.size, stat.inode, usable, day)
        row_id = self.db.execute(
            "INSERT INTO files(file_name, mtime_ns, size, inode, usable, day) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(file_name) DO UPDATE SET mtime_ns = excluded.mtime_ns, size = excluded.size,"
            " inode = excluded.inode, usable = excluded.usable, day = excluded.day RETURNING id",
            row,
        ).fetchone()[0]
        if usable:
            fields = (memory.name, memory.description, memory.type, _body_start(memory))
            self.db.execute(
                "INSERT INTO terms(rowid, name, description, type, body) VALUES (?, ?, ?, ?, ?)",
                (row_id, *map(document_text, fields)),
            )
        self.files[stat.file_name] = IndexedFile(_key(stat), row_id, usable, day, stat.mtime_ns)
        self.by_row[row_id] = stat.file_name
        return {day} if previous is None else {day, previous.day}

    def _rebuild_day(self, day: int) -> None:
        self.db.execute("DELETE FROM days WHERE rowid = ?", (day,))
        text = " ".join(field for row in self.db.execute(_DAY_TEXT, (day,)) for field in row if field)
        if text:
            self.db.execute("INSERT INTO days(rowid, text) VALUES (?, ?)", (day, text))


def day_of(mtime_ns: int) -> int:
    """The local calendar day of a file time, as a number (0 for a time no calendar holds)."""
    try:
        return dt.date.fromtimestamp(mtime_ns / 1e9).toordinal()
    except (OverflowError, OSError, ValueError):
        return 0


def _body_start(memory: MemoryFile) -> str:
    """The body's first BODY_INDEXED_CHARS; "" for anything but a readable regular file (a FIFO
    posing as a memory must not hang recall)."""
    try:
        fd = os.open(memory.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            if not stat_module.S_ISREG(os.fstat(fd).st_mode):
                return ""
            cap = frontmatter.MAX_HEADER_BYTES + 4 * BODY_INDEXED_CHARS
            data = handle.read(cap)
    except OSError:
        return ""
    text = decode_text(data, complete=len(data) < cap).text or ""
    block = _FRONT_BLOCK.match(text)
    return text[block.end() if block else 0 :][:BODY_INDEXED_CHARS]


def _key(stat: FileStat) -> _StatKey:
    return stat.mtime_ns, stat.size, stat.inode
