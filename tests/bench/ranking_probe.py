"""`python -m tests.bench.ranking_probe MODE DIR QUERY`: in this fresh process, time one way of
choosing recall's candidates and print the seconds. MODE: `ranking` (the index), `scan` (read
every header), `newest` (the newest the manifest holds, by mtime)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mini_claude.memory.recall.ranking import RecallRanking
from mini_claude.memory.recall.selection import MANIFEST_MAX_MEMORIES
from mini_claude.memory.store.memory_store import MemoryStore


def main() -> None:
    mode, root, query = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    store = MemoryStore(root)
    ranking = RecallRanking(store)
    started = time.perf_counter()
    if mode == "ranking":
        chosen = ranking.candidates(query, MANIFEST_MAX_MEMORIES)
    elif mode == "scan":
        chosen = [m for m in store.scan() if m.problem is None]
    else:
        chosen = [m for m in store.scan(limit=MANIFEST_MAX_MEMORIES) if m.problem is None]
    seconds = time.perf_counter() - started
    if not chosen:
        raise SystemExit(f"{mode}: nothing chosen in {root}")
    print(seconds)


if __name__ == "__main__":
    main()
