"""Recall: choosing the memories relevant to a message on a background thread, while the reply
streams. Started when the user submits, polled by the agent before each model call without ever
blocking; each memory reaches the conversation once. Exiting never waits for it (daemon threads)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mini_claude.memory.ranking import ranking_for
from mini_claude.memory.selection import (
    MANIFEST_MAX_MEMORIES,
    MEMORY_CONTENT_MAX_BYTES,
    SideQuery,
    reminder_text,
    select_relevant,
)
from mini_claude.memory.store import MemoryStore

log = logging.getLogger("mini_claude.recall")

SESSION_INJECTION_BUDGET_BYTES = 60_000
MIN_CJK_CHARS_FOR_ONE_WORD = 2


@dataclass
class RecalledMemories:
    """Memories ready for the model: one reminder text block per memory."""

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
    result: list[tuple[str, str]] | None = None  # (file name, reminder text), once it settles


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


class MemoryRecall:
    """One recall per submitted message, at most one running: a newer message supersedes it."""

    def __init__(
        self,
        store: MemoryStore,
        llm: SideQuery,
        *,
        clock: Callable[[], float] = time.time,
        on_settled: Callable[[], None] | None = None,
    ) -> None:
        self.store = store
        self.llm = llm
        self.clock = clock
        self.on_settled = on_settled  # called on the recall's thread once a recall has finished
        self._lock = threading.Lock()
        self._running: _Job | None = None
        self._settled: list[_Job] = []
        self.surfaced: set[str] = set()
        self.injected_bytes = 0
        self.history: list[RecallRecord] = []

    def start(self, query: str) -> None:
        if is_single_word(query) or self.injected_bytes >= SESSION_INJECTION_BUDGET_BYTES:
            return
        if not self.store.has_memories():
            return
        job = _Job(query)
        with self._lock:
            self._running = job  # a recall still running for an older message is now stale
        try:
            threading.Thread(target=self._run, args=(job,), name="memory-recall", daemon=True).start()
        except RuntimeError as error:  # no thread to be had: skip this recall, keep the next ones
            log.warning("memory recall skipped: %s", error)
            with self._lock:
                if self._running is job:
                    self._running = None

    def take_ready(self) -> RecalledMemories | None:
        """Settled results not injected yet (never blocks); None when there is nothing new."""
        with self._lock:
            settled, self._settled = self._settled, []
        recalled = RecalledMemories()
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
            self._running = None
            self._settled = []
        self.surfaced = set()
        self.injected_bytes = 0

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
        if self.on_settled is not None:
            self.on_settled()

    def _recall(self, query: str) -> list[tuple[str, str]]:
        now = self.clock()
        candidates = ranking_for(self.store).candidates(query, MANIFEST_MAX_MEMORIES, self.surfaced, now)
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
