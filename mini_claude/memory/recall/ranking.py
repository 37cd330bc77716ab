"""Which memories a recall offers the side model: the most relevant to the message (BM25 over each
memory's name, description, type and body start, newer ones preferred a little), found in an
SQLite FTS5 index derived from the files. A long message is searched by its parts, taken in turn
(see terms.query_parts): a question after a pasted log still finds its memory.

The files stay the only truth. The index is a cache: it lives in memory, is brought up to date
from the files' stats at every recall (so hand edits, deletions and other sessions' saves count at
once), and is saved as a dot file beside the memories so the next session starts warm. SQLite never
opens that file itself: we read it (never through a symlink) and write it (temp file + rename), so
there are no locks, journals or symlinks to trip over; a file that is unreadable, corrupt or not
ours is rebuilt, and when nothing works the newest memories are offered, as before ranking.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import sqlite3
import stat as stat_module
import threading
import time
import weakref
from collections.abc import Collection, Iterator

from mini_claude.core.files.text_decoding import decode_text
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.recall.ranking_index import (
    INDEX_FILE,
    IndexUnusable,
    check_schema,
    create_schema,
    read_index,
    write_index,
)
from mini_claude.memory.recall.terms import MAX_QUERY_TERMS, document_text, match_expression, query_parts
from mini_claude.memory.store.memory_store import FileStat, MemoryFile, MemoryStore

log = logging.getLogger("mini_claude.recall")

BODY_INDEXED_CHARS = 300  # a body's first lines name what it is about; the rest adds size, not recall
# BM25 weight of a term found in the name, description, type, body.
COLUMN_WEIGHTS = (3.0, 2.0, 0.5, 1.0)
# The newest memory's relevance counts up to this much more; the boost halves at HALF_DAYS old.
RECENCY_BOOST = 0.15
RECENCY_HALF_DAYS = 30.0
_NS_PER_DAY = 86_400 * 10**9
# The frontmatter block, to skip it cheaply (the store has parsed it already; a near miss only
# puts a few header words in the body column too).
_FRONT_BLOCK = re.compile(r"\A\s*---[ \t]*\r?\n.*?^[ \t]*---[ \t]*$", re.DOTALL | re.MULTILINE)

_RANKED = f"""
    SELECT files.file_name FROM terms JOIN files ON files.id = terms.rowid
    WHERE terms MATCH ?1
    ORDER BY bm25(terms, {", ".join(map(str, COLUMN_WEIGHTS))})
        * (1.0 + {RECENCY_BOOST} * {RECENCY_HALF_DAYS}
           / ({RECENCY_HALF_DAYS} + max(0, ?2 - files.mtime_ns) / {_NS_PER_DAY}.0)),
        files.mtime_ns DESC
    LIMIT ?3"""

_HOLDERS = "SELECT count(*) FROM terms WHERE terms MATCH ?1"

_StatKey = tuple[int, int, int]


class RecallRanking:
    """Chooses recall's candidates for one memory directory; safe to share between threads."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.path = store.root / INDEX_FILE
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        # file name -> (stat key, row id, offered at all): the index's files table, mirrored.
        self._known: dict[str, tuple[_StatKey, int, bool]] = {}
        self._save_failed = False
        self._trust_file = True  # False once the saved file failed us: rebuild instead of loading it
        self._logged = False

    def candidates(
        self, query: str, limit: int, exclude: Collection[str] = (), now: float | None = None
    ) -> list[MemoryFile]:
        """Up to `limit` usable memories not in `exclude`, most relevant to `query` first, then the
        newest. Never raises for the index's sake: a broken index means newest first, this time."""
        # A file name with a line break or undecodable bytes would break the manifest (or the
        # request itself): such a memory stays in MEMORY.md but is never offered.
        stats = {s.file_name: s for s in self.store.stat_files() if s.file_name.isprintable()}
        if not stats or limit <= 0:
            return []
        now_ns = int((time.time() if now is None else now) * 1e9)
        with self._lock:
            ranked = self._ranked_or_rebuilt(query, stats, limit + len(exclude), now_ns)
        chosen: list[MemoryFile] = []
        seen = set(exclude)
        for stat in itertools.chain((stats[name] for name in ranked if name in stats), _newest_first(stats)):
            if stat.file_name in seen:
                continue
            seen.add(stat.file_name)
            memory = self.store.header(stat)
            if memory.problem is None:
                chosen.append(memory)
                if len(chosen) == limit:
                    break
        return chosen

    def _ranked_or_rebuilt(
        self, query: str, stats: dict[str, FileStat], limit: int, now_ns: int
    ) -> list[str]:
        """A failing index (corrupt where only a query reaches, say) is rebuilt from the files
        once; if that fails too, no ranking this time."""
        for attempt in range(2):
            try:
                return self._ranked(query, stats, limit, now_ns)
            except (sqlite3.Error, OSError, IndexUnusable) as error:
                self._close()
                if attempt or not self._trust_file:
                    self._log_once(f"memory ranking unavailable ({error}); offering the newest memories")
                    return []
                self._log_once(f"memory ranking index {self.path} rebuilt: {error}", logging.INFO)
                self._trust_file = False
        return []

    # -- the index -------------------------------------------------------------------------------

    def _ranked(self, query: str, stats: dict[str, FileStat], limit: int, now_ns: int) -> list[str]:
        db = self._open(len(stats))
        changed = self._sync(db, stats)
        results = []
        for part in query_parts(query):
            if telling := _telling(db, part):
                results.append(
                    [row[0] for row in db.execute(_RANKED, (match_expression(telling), now_ns, limit))]
                )
        ranked = _in_turn(results, limit)
        if changed or (not self._save_failed and not os.path.lexists(self.path)):
            self._save(db)
        return ranked

    def _open(self, memories: int) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        self._known = {}
        self._db = db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        data = read_index(self.path, memories) if self._trust_file else None
        if data is None:
            create_schema(db)
            return db
        db.deserialize(data)
        check_schema(db)
        self._known = {
            name: ((mtime_ns, size, inode), row_id, bool(usable))
            for row_id, name, mtime_ns, size, inode, usable in db.execute(
                "SELECT id, file_name, mtime_ns, size, inode, usable FROM files"
            )
        }
        return db

    def _sync(self, db: sqlite3.Connection, stats: dict[str, FileStat]) -> bool:
        """Bring the index up to the files' stats; True when anything changed."""
        gone = [name for name in self._known if name not in stats]
        stale = [s for s in stats.values() if self._known.get(s.file_name, (None,))[0] != _key(s)]
        if not gone and not stale:
            return False
        db.execute("BEGIN")
        try:
            for name in gone:
                _, row_id, _ = self._known.pop(name)
                db.execute("DELETE FROM files WHERE id = ?", (row_id,))
                db.execute("DELETE FROM terms WHERE rowid = ?", (row_id,))
            for stat in stale:
                self._index(db, stat)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return True

    def _index(self, db: sqlite3.Connection, stat: FileStat) -> None:
        memory = self.store.header(stat)
        usable = memory.problem is None
        previous = self._known.get(stat.file_name)
        if previous is not None:
            db.execute("DELETE FROM terms WHERE rowid = ?", (previous[1],))
        row = (stat.file_name, stat.mtime_ns, stat.size, stat.inode, usable)
        row_id = db.execute(
            "INSERT INTO files(file_name, mtime_ns, size, inode, usable) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(file_name) DO UPDATE SET mtime_ns = excluded.mtime_ns, size = excluded.size,"
            " inode = excluded.inode, usable = excluded.usable RETURNING id",
            row,
        ).fetchone()[0]
        if usable:
            fields = (memory.name, memory.description, memory.type, self._body_start(memory))
            db.execute(
                "INSERT INTO terms(rowid, name, description, type, body) VALUES (?, ?, ?, ?, ?)",
                (row_id, *map(document_text, fields)),
            )
        self._known[stat.file_name] = (_key(stat), row_id, usable)

    def _body_start(self, memory: MemoryFile) -> str:
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

    def _save(self, db: sqlite3.Connection) -> None:
        """Write the index beside the memories (temp file + rename: a symlink there is replaced,
        never followed). A cache: without fsync, and a failure only costs the next session time."""
        data = db.serialize()
        try:
            write_index(self.path, data)
            self._save_failed = False
        except OSError as error:
            self._save_failed = True
            self._log_once(f"memory ranking index not saved ({error.strerror or error}); kept in memory")

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
        self._db = None
        self._known = {}

    def _log_once(self, message: str, level: int = logging.WARNING) -> None:
        """One line per session: a broken cache is worth knowing about, not worth a flood."""
        if not self._logged:
            self._logged = True
            log.log(level, message)


_rankings: weakref.WeakKeyDictionary[MemoryStore, RecallRanking] = weakref.WeakKeyDictionary()
_rankings_lock = threading.Lock()


def ranking_for(store: MemoryStore) -> RecallRanking:
    """The one ranking of `store`, so every recall of a session shares its index."""
    with _rankings_lock:
        ranking = _rankings.get(store)
        if ranking is None:
            ranking = _rankings[store] = RecallRanking(store)
        return ranking


def _telling(db: sqlite3.Connection, part: list[str]) -> list[str]:
    """At most MAX_QUERY_TERMS of `part`: all when they fit, else the rarest in the index (a term
    few memories hold says most about which is meant; one that none holds matches nothing)."""
    if len(part) <= MAX_QUERY_TERMS:
        return part
    held = {term: db.execute(_HOLDERS, (match_expression([term]),)).fetchone()[0] for term in part}
    rarest = set(sorted((term for term in part if held[term]), key=held.__getitem__)[:MAX_QUERY_TERMS])
    return [term for term in part if term in rarest]


def _in_turn(results: list[list[str]], limit: int) -> list[str]:
    """The parts' rankings merged by taking one from each in turn: each part of a long message (the
    question, the paste) gets an equal share of the manifest, whichever matches more words."""
    merged = dict.fromkeys(name for row in itertools.zip_longest(*results) for name in row if name)
    return list(merged)[:limit]


def _newest_first(stats: dict[str, FileStat]) -> Iterator[FileStat]:
    """Sorted only if the ranked ones run out (a generator's body waits for its first `next`)."""
    yield from sorted(stats.values(), key=lambda s: (-s.mtime_ns, s.file_name))


def _key(stat: FileStat) -> _StatKey:
    return stat.mtime_ns, stat.size, stat.inode
