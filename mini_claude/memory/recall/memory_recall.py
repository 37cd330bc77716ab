"""Recall: choosing the memories relevant to a message on a background thread. Started when the
user sends a message, or earlier on the draft they are typing (see memory/recall/rules.py for when a
draft's recall stands for the message); polled by the agent before each model call without ever
blocking; each memory reaches the conversation once. Exiting never waits for it (daemon threads)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from mini_claude.memory.recall.ranking import ranking_for
from mini_claude.memory.recall.rules import (
    adds_little,
    draft_covers,
    grown_enough,
    is_single_word,
    worth_a_draft_recall,
)
from mini_claude.memory.recall.selection import (
    MANIFEST_MAX_MEMORIES,
    MEMORY_CONTENT_MAX_BYTES,
    SideQuery,
    reminder_text,
    select_relevant,
)
from mini_claude.memory.store.memory_store import MemoryStore

log = logging.getLogger("mini_claude.recall")

SESSION_INJECTION_BUDGET_BYTES = 60_000


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


@dataclass(eq=False)
class _Job:
    query: str
    kind: Literal["draft", "message"]
    done: bool = False
    stale: bool = False  # superseded: its result is dropped
    failed: bool = False  # the side query failed (error, timeout, overload): it chose nothing
    # An adopted draft the sent message relies on instead of a recall of its own: if it fails,
    # that recall runs after all.
    stands_for: str | None = None
    result: list[tuple[str, str]] = field(default_factory=list)  # (file name, reminder text)


class MemoryRecall:
    """Recalls for sent messages (a newer message makes an older one's recall stale) and for
    drafts (at most one in flight; the newest draft waiting while it runs; the newest settled
    one kept while a newer one runs, since the message may extend either)."""

    def __init__(
        self,
        store: MemoryStore,
        llm: SideQuery,
        *,
        clock: Callable[[], float] = time.time,
        on_settled: Callable[[], None] | None = None,
        on_recalled: Callable[[tuple[str, ...]], None] | None = None,
    ) -> None:
        self.store = store
        self.llm = llm
        self.clock = clock
        self.on_settled = on_settled  # called on the recall's thread once a recall has finished
        self.on_recalled = on_recalled  # told the file names that reached the conversation (the history)
        self._lock = threading.Lock()
        self._messages: list[_Job] = []  # running recalls of sent messages
        self._draft: _Job | None = None  # the latest draft's recall, running or done
        self._settled_draft: _Job | None = None  # the newest draft recall that succeeded
        self._waiting_draft: str | None = None  # typed while a draft's recall ran
        self._settled: list[_Job] = []
        self.surfaced: set[str] = set()
        self.injected_bytes = 0
        self.history: list[RecallRecord] = []

    def start(self, query: str) -> None:
        """The user sent `query`: recall for it, unless a draft's recall already stands for it.

        The newest settled draft recall that the message extends goes into its first request; a
        draft recall still running that it extends is adopted (it lands by the usual poll). A
        recall of the message's own runs unless one of those drafts leaves it no new search term
        (`adds_little`); a failed draft recall stands for nothing."""
        with self._lock:
            for job in self._messages:
                job.stale = True
            self._messages = []
            running, settled = self._draft, self._settled_draft
            self._draft, self._settled_draft, self._waiting_draft = None, None, None
            if running is not None and running.done:
                running = None  # settled already (then it is `settled`), or failed
            enough = False  # a covering draft leaves the message nothing new to recall for
            if settled is not None and draft_covers(settled.query, query):
                settled.kind = "message"
                if settled.result:
                    self._settled.append(settled)  # ready for the message's first request
                enough = adds_little(settled.query, query)
            if running is not None and draft_covers(running.query, query):
                running.kind = "message"
                self._messages.append(running)
                if not enough and adds_little(running.query, query):
                    running.stands_for, enough = query, True
            elif running is not None:
                running.stale = True
        if not enough:
            self._recall_message(query)

    def start_draft(self, draft: str) -> None:
        """The user paused while typing `draft`: recall for it ahead of Enter, if it is worth it."""
        if not worth_a_draft_recall(draft) or not self._worth_a_recall():
            return
        with self._lock:
            last = self._draft
            if last is not None and not grown_enough(last.query, draft):
                return
            if last is not None and not last.done:
                self._waiting_draft = draft  # one draft recall at a time; the newest waits
                return
            job = self._draft = _Job(draft, "draft")
        self._launch(job)

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
        if self.on_recalled is not None:
            self.on_recalled(tuple(recalled.file_names))
        return recalled

    def reset(self) -> None:
        """A new conversation: forget what was surfaced and drop anything pending."""
        with self._lock:
            for job in [*self._messages, *([self._draft] if self._draft else [])]:
                job.stale = True
            self._messages, self._settled = [], []
            self._draft, self._settled_draft, self._waiting_draft = None, None, None
        self.surfaced = set()
        self.injected_bytes = 0

    def _recall_message(self, query: str) -> None:
        if self._worth_a_recall() and not is_single_word(query):
            self._launch(_Job(query, "message"))

    def _worth_a_recall(self) -> bool:
        return self.injected_bytes < SESSION_INJECTION_BUDGET_BYTES and self.store.has_memories()

    def _launch(self, job: _Job) -> None:
        with self._lock:
            if job.kind == "message":
                self._messages.append(job)
        try:
            threading.Thread(target=self._run, args=(job,), name="memory-recall", daemon=True).start()
        except RuntimeError as error:  # no thread to be had: skip this recall, keep the next ones
            log.warning("memory recall skipped: %s", error)
            with self._lock:
                job.done, job.stale = True, True
                if job in self._messages:
                    self._messages.remove(job)

    def _run(self, job: _Job) -> None:
        try:
            job.result = self._recall(job.query)
        except Exception as error:
            job.failed = True
            log.info("memory recall skipped: %s: %s", type(error).__name__, error)
        next_draft = None
        fallback = None
        with self._lock:
            job.done = True
            if job in self._messages:
                self._messages.remove(job)
                if not job.stale and job.result:
                    self._settled.append(job)
                if job.failed and not job.stale:
                    fallback = job.stands_for  # the message relied on it: recall for it after all
            elif job is self._draft:
                if not job.failed:
                    self._settled_draft = job
                if self._waiting_draft is not None:
                    waiting, self._waiting_draft = self._waiting_draft, None
                    if grown_enough(job.query, waiting):
                        next_draft = self._draft = _Job(waiting, "draft")
        if next_draft is not None:
            self._launch(next_draft)
        if fallback is not None:
            self._recall_message(fallback)
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
