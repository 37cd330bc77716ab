"""The ranking index kept in step with the memory files: one row of terms per memory, brought up to
date from the files' stats at every ranking, and what ranking asks of it: a query's terms as the
index stems them, where each term is (its postings), and how specific each memory's words are.

Apart from ranking.py, which ranks; this is what fills and reads the index. The index lives in
memory (SQLite `:memory:`) and is loaded from and saved to its file by ranking_index.py.
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
from mini_claude.memory.recall.ranking_index import check_schema, create_lookups, create_schema, read_index
from mini_claude.memory.recall.scoring import COLUMN_WEIGHTS, Corpus, Indexed, Postings, idf
from mini_claude.memory.recall.terms import terms
from mini_claude.memory.store.headers import FileStat
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore

BODY_INDEXED_CHARS = 600  # a body's first lines name what it is about; the rest adds size, not recall
# A word held by more than this share of the memories, in a folder of more than COMMON_MIN_HOLDERS
# of them, says next to nothing about which is meant (BM25 gives it almost no weight) and costs the
# most to weigh: left out of the ranking.
COMMON_SHARE = 0.8
COMMON_MIN_HOLDERS = 2000
# The frontmatter block, to skip it cheaply (the store has parsed it already; a near miss only
# puts a few header words in the body column too).
_FRONT_BLOCK = re.compile(r"\A\s*---[ \t]*\r?\n.*?^[ \t]*---[ \t]*$", re.DOTALL | re.MULTILINE)
_POSTINGS = "SELECT doc, col, count(*) FROM temp.term_instances WHERE term = ? GROUP BY doc, col"
_HOLDERS = "SELECT doc FROM temp.term_rows WHERE term = ?"
_EVERY_HOLDERS = "SELECT term, doc FROM temp.term_rows"
_TEXTS = "SELECT rowid, name || ' ' || description || ' ' || type || ' ' || body FROM terms WHERE rowid IN"
_STEMS_KEPT = 200_000  # words whose stems are kept (a huge vocabulary is stemmed again)
_ROWS_READ = 500  # memories read per query (SQLite bounds a statement's parameters)
_COLUMN_WEIGHT = dict(zip(("name", "description", "type", "body"), COLUMN_WEIGHTS, strict=True))

_StatKey = tuple[int, int, int]


class IndexedFile(NamedTuple):
    key: _StatKey  # the stat it was indexed at: (mtime_ns, size, inode)
    row_id: int
    usable: bool  # offered at all (a broken file is known, so it is not read again, but not offered)
    day: int
    mtime_ns: int
    length: int  # its terms, in all four fields


class IndexMirror:
    """The in-memory index of one memory folder and, beside it, what its files table says."""

    def __init__(self, store: MemoryStore, path: Path, memories: int, *, load: bool) -> None:
        """An empty index, or (`load`) the one saved at `path`: raises sqlite3.Error, OSError or
        IndexUnusable when that file cannot serve."""
        self.store = store
        self.db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self.files: dict[str, IndexedFile] = {}
        self.by_row: dict[int, str] = {}
        self._corpus: Corpus | None = None
        self._holders: dict[str, int] | None = None  # with the corpus: how many memories hold each term
        self._specificity: dict[int, float] = {}  # with the corpus: what specificity() found so far
        self._stem_of: dict[str, str] = {}  # each word of a memory's text met so far: its stem
        try:
            if load:
                self._load(path, memories)
            else:
                create_schema(self.db)
            create_lookups(self.db)
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
        for row_id, name, mtime_ns, size, inode, usable, day, length in self.db.execute(
            "SELECT id, file_name, mtime_ns, size, inode, usable, day, length FROM files"
        ):
            key = (mtime_ns, size, inode)
            self.files[name] = IndexedFile(key, row_id, bool(usable), day, mtime_ns, length)
            self.by_row[row_id] = name

    def close(self) -> None:
        self.db.close()

    def corpus(self) -> Corpus:
        """What BM25 needs to know of all the usable memories (kept until the next change)."""
        if self._corpus is None:
            usable = [Indexed(f.row_id, f.mtime_ns, f.day, f.length) for f in self.files.values() if f.usable]
            self._corpus = Corpus(usable)
        return self._corpus

    def specificity(self, rows: list[int]) -> dict[int, float]:
        """How specific each memory of `rows` is: the mean idf of its distinct terms (a note made of
        words most memories hold says little). Kept until the next change; a memory without terms
        is left out."""
        count = self.corpus().count
        if self._holders is None:
            self._holders = dict(self.db.execute(_EVERY_HOLDERS))
        holders, found = self._holders, self._specificity
        missing = [row for row in rows if row not in found]
        for start in range(0, len(missing), _ROWS_READ):
            for row, stems in self._stems_of(missing[start : start + _ROWS_READ]).items():
                found[row] = sum(idf(count, holders.get(stem, 1)) for stem in stems) / len(stems)
        return {row: found[row] for row in rows if row in found}

    def _stems_of(self, rows: list[int]) -> dict[int, set[str]]:
        """The distinct stems of each memory of `rows` that has any, from its indexed text (the
        terms table keeps it); each word is stemmed once a session."""
        marks = ",".join("?" * len(rows))
        texts = {row: (text or "").split() for row, text in self.db.execute(f"{_TEXTS} ({marks})", rows)}
        stem_of = self._stem_of
        if len(stem_of) > _STEMS_KEPT:
            stem_of.clear()
        if new := list({word: None for words in texts.values() for word in words if word not in stem_of}):
            stemmed = self._stemmed(new)
            if len(stemmed) != len(new):  # (each term is one token: never seen)
                return {}
            stem_of.update(zip(new, stemmed, strict=True))
        return {row: {stem_of[word] for word in words} for row, words in texts.items() if words}

    def _stemmed(self, words: list[str]) -> list[str]:
        """`words` stemmed as the index stems them, one for one (a term is one token)."""
        self.db.execute("INSERT INTO temp.stemmer(rowid, text) VALUES (1, ?)", (" ".join(words),))
        try:
            return [term for (term,) in self.db.execute("SELECT term FROM temp.stems ORDER BY offset")]
        finally:
            self.db.execute("DELETE FROM temp.stemmer")

    def stems(self, query_terms: list[str]) -> list[str]:
        """`query_terms` as the index holds them (stemmed), in order, without repeats."""
        return list(dict.fromkeys(self._stemmed(query_terms)))

    def holders(self, stem: str) -> int:
        """How many memories hold `stem`."""
        row = self.db.execute(_HOLDERS, (stem,)).fetchone()
        return int(row[0]) if row else 0

    def postings(self, stems: list[str]) -> Postings:
        """Where each of `stems` is: per memory row, its weighted and its plain count. A word most
        memories of a big folder hold is left out (COMMON_SHARE)."""
        common = max(COMMON_MIN_HOLDERS, COMMON_SHARE * len(self.files))
        found: Postings = {}
        for stem in stems:
            if self.holders(stem) > common:
                continue
            counts: dict[int, tuple[float, int]] = {}
            for row, column, count in self.db.execute(_POSTINGS, (stem,)):
                weighted, plain = counts.get(row, (0.0, 0))
                counts[row] = (weighted + _COLUMN_WEIGHT[column] * count, plain + count)
            if counts:
                found[stem] = counts
        return found

    def sync(self, stats: dict[str, FileStat]) -> bool:
        """Bring the index up to the files' stats; True when anything changed."""
        gone = [name for name in self.files if name not in stats]
        stale = [stat for stat in stats.values() if self._changed(stat)]
        if not gone and not stale:
            return False
        self._forget_statistics()
        self.db.execute("BEGIN")
        try:
            for name in gone:
                known = self.files.pop(name)
                del self.by_row[known.row_id]
                self.db.execute("DELETE FROM files WHERE id = ?", (known.row_id,))
                self.db.execute("DELETE FROM terms WHERE rowid = ?", (known.row_id,))
            for stat in stale:
                self._index(stat)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            self._forget_statistics()
            raise
        return True

    def _forget_statistics(self) -> None:
        self._corpus, self._holders, self._specificity = None, None, {}

    def _changed(self, stat: FileStat) -> bool:
        known = self.files.get(stat.file_name)
        return known is None or known.key != _key(stat)

    def _index(self, stat: FileStat) -> None:
        """Index one new or changed file."""
        memory = self.store.headers.header(stat)
        usable = memory.problem is None
        previous = self.files.get(stat.file_name)
        if previous is not None:
            self.db.execute("DELETE FROM terms WHERE rowid = ?", (previous.row_id,))
        texts = (memory.name, memory.description, memory.type, _body_start(memory)) if usable else ()
        fields = [terms(text) for text in texts]
        length = sum(map(len, fields))
        day = day_of(stat.mtime_ns)
        row = (stat.file_name, stat.mtime_ns, stat.size, stat.inode, usable, day, length)
        row_id = self.db.execute(
            "INSERT INTO files(file_name, mtime_ns, size, inode, usable, day, length)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(file_name) DO UPDATE SET mtime_ns = excluded.mtime_ns, size = excluded.size,"
            " inode = excluded.inode, usable = excluded.usable, day = excluded.day,"
            " length = excluded.length RETURNING id",
            row,
        ).fetchone()[0]
        if usable:
            self.db.execute(
                "INSERT INTO terms(rowid, name, description, type, body) VALUES (?, ?, ?, ?, ?)",
                (row_id, *(" ".join(field) for field in fields)),
            )
        self.files[stat.file_name] = IndexedFile(_key(stat), row_id, usable, day, stat.mtime_ns, length)
        self.by_row[row_id] = stat.file_name


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
