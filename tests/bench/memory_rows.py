"""Memory at scale, in-process with the real store and recall code: the manifest a recall sends
and the index rebuild after a save, each against the naive way (read and parse every file whole)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.recall.memory_recall import MemoryRecall
from mini_claude.memory.recall.selection import MANIFEST_MAX_MEMORIES, selection_request
from mini_claude.memory.store.index import render_index
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import INDEX_FILE, is_memory_file_name
from tests.agent_harness import wait_for_recalls
from tests.bench.stats import Row, Samples, ratio_at_most

QUERY = "how do we run the database migration tests before a release?"
RECALL_TIMEOUT = 60.0


class InstantSideModel:
    """The side model answering at once and choosing nothing: only our own work is timed."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []

    def side_query(self, *, system: str, user: str, max_tokens: int, timeout: float | None = None) -> str:
        self.requests.append((system, user))
        return '{"selected_memories": []}'


def read_all_whole(root: Path) -> list[MemoryFile]:
    """The naive way: every memory file read whole and parsed, newest first."""
    memories = []
    with os.scandir(root) as entries:
        for entry in entries:
            if not is_memory_file_name(entry.name):
                continue
            stat = entry.stat()
            header = frontmatter.parse(Path(entry.path).read_bytes())
            fields = header.fields
            memories.append(
                MemoryFile(
                    entry.name, Path(entry.path), fields.get("name", "").strip() or entry.name,
                    fields.get("description", "").strip(), fields.get("type", "").strip(),
                    stat.st_mtime, stat.st_size, None if header.has_block else "broken", header.warnings,
                )
            )  # fmt: skip
    memories.sort(key=lambda m: (-m.mtime, m.file_name))
    return memories


def naive_manifest(root: Path) -> str:
    good = [m for m in read_all_whole(root) if m.problem is None]
    return selection_request(QUERY, good[:MANIFEST_MAX_MEMORIES], time.time())[1]


def naive_rebuild(root: Path) -> None:
    good = [m for m in read_all_whole(root) if m.problem is None]
    write_atomic(root / INDEX_FILE, render_index(good))


def manifest_row(root: Path, runs: int) -> Row:
    """A recall as its thread runs it (cold store: no headers cached in-process yet)."""
    measured, baseline = Samples(), Samples()
    for _ in range(runs):
        side_model = InstantSideModel()
        recall = MemoryRecall(MemoryStore(root), side_model)
        started = time.perf_counter()
        recall.start(QUERY)
        if not wait_for_recalls(RECALL_TIMEOUT) or not side_model.requests:
            raise RuntimeError("the recall did not ask the side model")
        measured.add(time.perf_counter() - started)

        started = time.perf_counter()
        naive_manifest(root)
        baseline.add(time.perf_counter() - started)
    return Row("recall manifest at scale", measured, baseline, *ratio_at_most(0.5))


def rebuild_row(root: Path, runs: int) -> Row:
    """A running session (its store already scanned) saving one memory, index rebuilt.
    The memory is deleted again after each run, so every run sees the same directory."""
    store = MemoryStore(root)
    store.startup()
    measured, baseline = Samples(), Samples()
    for run in range(runs):
        name = f"benchmark run {run}"
        started = time.perf_counter()
        store.save(name=name, description="saved by the benchmark", memory_type="project", body="Body.\n")
        measured.add(time.perf_counter() - started)
        store.delete(store.find(name)[0])

        started = time.perf_counter()
        naive_rebuild(root)
        baseline.add(time.perf_counter() - started)
    return Row("index rebuild at scale", measured, baseline, *ratio_at_most(0.5))
