"""Which memories match a message, best first (see scoring.py for how they are ranked), found in an
SQLite FTS5 index derived from the files. A long message is searched by its parts, taken in turn
(see terms.query_parts): a question after a pasted log still finds its memory. Recall offers the
side model the best of them (topped up with the newest); `memory search` lists them.

The files stay the only truth. The index is a cache: it lives in memory, is brought up to date
from the files' stats at every ranking (so hand edits, deletions and other sessions' saves count at
once), and is saved as a dot file beside the memories so the next session starts warm. SQLite never
opens that file itself: we read it (never through a symlink) and write it (temp file + rename), so
there are no locks, journals or symlinks to trip over; a file that is unreadable, corrupt or not
ours is rebuilt, and when nothing works the newest memories are offered, as before ranking.
"""

from __future__ import annotations

import itertools
import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Collection, Iterator

from mini_claude.memory.recall.ranking_index import INDEX_FILE, IndexUnusable, write_index
from mini_claude.memory.recall.ranking_sync import IndexMirror
from mini_claude.memory.recall.scoring import scores, specific
from mini_claude.memory.recall.terms import MAX_QUERY_TERMS, query_parts
from mini_claude.memory.store.headers import FileStat, stat_memory_files
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore

log = logging.getLogger("mini_claude.recall")

Scored = tuple[str, float]  # (file name, score)


class RecallRanking:
    """Ranks the memories of one memory directory; safe to share between threads."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.path = store.root / INDEX_FILE
        self._lock = threading.Lock()
        self._index: IndexMirror | None = None
        self._save_failed = False
        self._trust_file = True  # False once the saved file failed us: rebuild instead of loading it
        self._logged = False

    def candidates(
        self, query: str, limit: int, exclude: Collection[str] = (), now: float | None = None
    ) -> list[MemoryFile]:
        """Up to `limit` usable memories not in `exclude`, most relevant to `query` first, then the
        newest. Never raises for the index's sake: a broken index means newest first, this time."""
        stats = self._stats()
        if not stats or limit <= 0:
            return []
        limit = min(limit, len(stats))  # a huge one would overflow SQLite's LIMIT and islice
        ranked = [name for name, _ in self._ranked_or_rebuilt(query, stats, limit + len(exclude), now)]
        names = itertools.chain(ranked, (s.file_name for s in _newest_first(stats)))
        return list(itertools.islice(self._usable(names, stats, exclude), limit))

    def search(
        self, query: str, limit: int, now: float | None = None, exclude: Collection[str] = ()
    ) -> list[tuple[MemoryFile, float]]:
        """Up to `limit` usable memories not in `exclude` sharing a search term with `query`, best
        first, with their scores (higher is better; comparable within one search). [] when the
        index fails."""
        stats = self._stats()
        if not stats or limit <= 0:
            return []
        limit = min(limit, len(stats))
        ranked = self._ranked_or_rebuilt(query, stats, limit + len(exclude), now)
        score = dict(ranked)
        memories = self._usable((name for name, _ in ranked), stats, exclude)
        return [(memory, score[memory.file_name]) for memory in itertools.islice(memories, limit)]

    def _stats(self) -> dict[str, FileStat]:
        # A file name with a line break or undecodable bytes would break the manifest (or the
        # request itself): such a memory stays in MEMORY.md but is never offered.
        return {s.file_name: s for s in stat_memory_files(self.store.root) if s.file_name.isprintable()}

    def _usable(
        self, names: Iterator[str], stats: dict[str, FileStat], exclude: Collection[str]
    ) -> Iterator[MemoryFile]:
        seen = set(exclude)
        for name in names:
            if name in seen or name not in stats:
                continue
            seen.add(name)
            memory = self.store.headers.header(stats[name])
            if memory.problem is None:
                yield memory

    def _ranked_or_rebuilt(
        self, query: str, stats: dict[str, FileStat], limit: int, now: float | None
    ) -> list[Scored]:
        """A failing index (corrupt where only a query reaches, say) is rebuilt from the files
        once; if that fails too, no ranking this time."""
        now_ns = int((time.time() if now is None else now) * 1e9)
        with self._lock:
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

    def _ranked(self, query: str, stats: dict[str, FileStat], limit: int, now_ns: int) -> list[Scored]:
        if self._index is None:
            self._index = IndexMirror(self.store, self.path, len(stats), load=self._trust_file)
        index = self._index
        changed = index.sync(stats)
        results = []
        for part in query_parts(query):
            if telling := _telling(index, index.stems(part)):
                results.append(_scored(index, telling, now_ns))
        ranked = _in_turn(results, limit)
        if changed or (not self._save_failed and not os.path.lexists(self.path)):
            self._save(index.db)
        return ranked

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
        if self._index is not None:
            self._index.close()
        self._index = None

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


def _scored(index: IndexMirror, stems: list[str], now_ns: int) -> list[Scored]:
    """The memories holding any of `stems` (and their neighbours), best first (ties: newer, then
    by file name)."""
    postings = index.postings(stems)
    if not postings:
        return []  # (the corpus's statistics are not even needed)
    found = specific(scores(postings, index.corpus(), now_ns), index.specificity)
    memories = index.corpus().memories
    order = sorted(found, key=lambda row: (-found[row], -memories[row].mtime_ns, index.by_row[row]))
    return [(index.by_row[row], found[row]) for row in order]


def _telling(index: IndexMirror, part: list[str]) -> list[str]:
    """At most MAX_QUERY_TERMS of `part`: all when they fit, else the rarest in the index (a term
    few memories hold says most about which is meant; one that none holds matches nothing)."""
    if len(part) <= MAX_QUERY_TERMS:
        return part
    held = {term: index.holders(term) for term in part}
    rarest = set(sorted((term for term in part if held[term]), key=held.__getitem__)[:MAX_QUERY_TERMS])
    return [term for term in part if term in rarest]


def _in_turn(results: list[list[Scored]], limit: int) -> list[Scored]:
    """The parts' rankings merged by taking one from each in turn: each part of a long message (the
    question, the paste) gets an equal share of the manifest, whichever matches more words. A
    memory found by several parts keeps its best score."""
    merged: dict[str, float] = {}
    for row in itertools.zip_longest(*results):
        for found in row:
            if found is not None:
                name, score = found
                merged[name] = max(score, merged.get(name, score))
    return list(merged.items())[:limit]


def _newest_first(stats: dict[str, FileStat]) -> Iterator[FileStat]:
    """Sorted only if the ranked ones run out (a generator's body waits for its first `next`)."""
    yield from sorted(stats.values(), key=lambda s: (-s.mtime_ns, s.file_name))
