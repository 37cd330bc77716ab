"""Recall on a background thread: started when the user submits, polled by the agent without
ever blocking, each result injected once. Exiting never waits for it (daemon threads)."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mini_claude.memory.recall import (
    MANIFEST_MAX_MEMORIES,
    MEMORY_CONTENT_MAX_BYTES,
    SideQuery,
    reminder_text,
    select_relevant,
)
from mini_claude.memory.store import MemoryStore

log = logging.getLogger("mini_claude.recall")

SESSION_INJECTION_BUDGET_BYTES = 60_000
# Recall's own work (header scan, manifest, building the side query) competes with the main request
# for the interpreter lock, so it waits until the reply has started showing, or this many seconds:
# by then the main request is on its way and the main thread is mostly waiting on the network.
HOLD_BACK_SECONDS = 0.2
MIN_CJK_CHARS_FOR_ONE_WORD = 2


@dataclass
class Recalled:
    """Memories ready for the model: one text block per memory."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    file_names: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RecallRecord:
    """What one injection surfaced, for `/memory recalled`."""

    at: float
    query: str
    file_names: tuple[str, ...]


@dataclass
class _Job:
    query: str
    # (file name, reminder text) pairs, set when the job settles
    result: list[tuple[str, str]] | None = None
    go: threading.Event = field(default_factory=threading.Event)  # set: stop holding back


def is_single_word(text: str) -> bool:
    """No whitespace and fewer than two CJK characters: too little to recall anything by."""
    stripped = text.strip()
    if any(ch.isspace() for ch in stripped):
        return False
    return sum(1 for ch in stripped if _is_cjk(ch)) < MIN_CJK_CHARS_FOR_ONE_WORD


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x3040 <= code <= 0x30FF  # Hiragana, Katakana
        or 0x3400 <= code <= 0x4DBF  # CJK Extension A
        or 0x4E00 <= code <= 0x9FFF  # CJK Unified Ideographs
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
        or 0xF900 <= code <= 0xFAFF  # CJK compatibility ideographs
        or 0x20000 <= code <= 0x3FFFF  # CJK Extensions B and later
    )


class MemoryPrefetch:
    """The agent's `MemoryRecall`: one recall per submitted message, at most one running."""

    def __init__(self, store: MemoryStore, llm: SideQuery, *, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.llm = llm
        self.clock = clock
        self._lock = threading.Lock()
        self._running: _Job | None = None
        self._settled: list[_Job] = []
        self._queue: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._dispatcher: threading.Thread | None = None
        self.surfaced: set[str] = set()
        self.injected_bytes = 0
        self.history: list[RecallRecord] = []

    def prepare(self) -> None:
        """Start the thread that launches recalls, ideally while the user types: starting a thread
        costs the caller a context switch, which `start` should not add to a reply's first token."""
        with self._lock:
            if self._dispatcher is None:
                self._dispatcher = threading.Thread(
                    target=self._dispatch, name="memory-recall-dispatch", daemon=True
                )
                self._dispatcher.start()

    def start(self, query: str) -> None:
        if is_single_word(query) or self.injected_bytes >= SESSION_INJECTION_BUDGET_BYTES:
            return
        if not self.store.has_memories():
            return
        job = _Job(query)
        with self._lock:
            # A newer message makes an unfinished recall stale: its result will be dropped.
            if self._running is not None:
                self._running.go.set()
            self._running = job
        self.prepare()
        self._queue.put(job)

    def reply_started(self) -> None:
        """The main reply has started showing: a held-back recall may run now."""
        with self._lock:
            if self._running is not None:
                self._running.go.set()

    def take_ready(self) -> Recalled | None:
        """Settled results not injected yet (never blocks); None when there is nothing new."""
        with self._lock:
            settled, self._settled = self._settled, []
        recalled = Recalled()
        for job in settled:
            for file_name, text in job.result or []:
                size = len(text.encode("utf-8"))
                # The memory that reaches the budget still goes in (overshooting by one reminder at
                # most): with a hard cap the total could stall just below it, and `start` would keep
                # paying for side queries whose every result is dropped.
                if file_name in self.surfaced or self.injected_bytes >= SESSION_INJECTION_BUDGET_BYTES:
                    continue
                self.surfaced.add(file_name)
                self.injected_bytes += size
                recalled.blocks.append({"type": "text", "text": text})
                recalled.file_names.append(file_name)
        if not recalled.blocks:
            return None
        self.history.append(RecallRecord(self.clock(), settled[-1].query, tuple(recalled.file_names)))
        return recalled

    def reset(self) -> None:
        """A new conversation: forget what was surfaced and drop anything pending."""
        with self._lock:
            if self._running is not None:
                self._running.go.set()
            self._running = None
            self._settled = []
        self.surfaced = set()
        self.injected_bytes = 0

    def wait_idle(self, timeout: float) -> bool:
        """For tests and benchmarks only: wait until no recall is running."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self._running is None:
                    return True
            time.sleep(0.01)
        return False

    def _dispatch(self) -> None:
        while True:
            job = self._queue.get()
            job.go.wait(HOLD_BACK_SECONDS)
            with self._lock:
                superseded = job is not self._running  # by a newer message or a reset, before it began
            if superseded:
                continue
            try:
                threading.Thread(target=self._run, args=(job,), name="memory-recall", daemon=True).start()
            except RuntimeError as error:  # no thread to be had: skip this recall, keep dispatching
                log.warning("memory recall skipped: %s", error)
                with self._lock:
                    if self._running is job:
                        self._running = None

    def _run(self, job: _Job) -> None:
        try:
            job.result = self._recall(job.query)
        except Exception as error:
            log.info("memory recall skipped: %s: %s", type(error).__name__, error)
            job.result = []
        with self._lock:
            if self._running is job:
                self._running = None
                if job.result:
                    self._settled.append(job)

    def _recall(self, query: str) -> list[tuple[str, str]]:
        now = self.clock()
        candidates = [
            m
            for m in self.store.scan(limit=MANIFEST_MAX_MEMORIES + len(self.surfaced))
            # A hand-made file name with a line break or undecodable bytes would break the manifest
            # (or the request itself): such a memory stays in the index but is never offered.
            if m.problem is None and m.file_name not in self.surfaced and m.file_name.isprintable()
        ][:MANIFEST_MAX_MEMORIES]
        if not candidates:
            return []
        chosen = select_relevant(self.llm, query, candidates, now)
        by_name = {m.file_name: m for m in candidates}
        reminders = []
        for file_name in chosen:
            memory = by_name[file_name]
            try:
                found = self.store.read_text(memory, MEMORY_CONTENT_MAX_BYTES)
            except OSError as error:
                log.info("memory %s unreadable: %s", file_name, error)
                continue
            reminders.append((file_name, reminder_text(memory, found.text, found.was_cut, now)))
        log.info("memory recall chose %s for %r", [name for name, _ in reminders], query[:80])
        return reminders
