"""Recall: choosing the memories relevant to a message on a background thread. Started when the
user sends a message, or earlier on the draft they are typing (see memory/recall/rules.py for when a
draft's recall stands for the message); polled by the agent before each model call without ever
blocking; each memory reaches the conversation once. Exiting never waits for it (daemon threads)."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from mini_claude.core import prompts
from mini_claude.llm.client import ModelClient
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
    reminder_text,
    select_relevant,
)
from mini_claude.memory.scopes import MemoryScopes
from mini_claude.memory.staleness import check_paths, expired, expiry_condition
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore

log = logging.getLogger("mini_claude.recall")

SESSION_INJECTION_BUDGET_BYTES = 60_000


@dataclass
class RecalledMemories:
    """Memories ready for the model: one reminder text block per memory."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    file_names: list[str] = field(default_factory=list)  # the memories' keys (MemoryFile.key)


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
    result: list[tuple[str, str]] = field(default_factory=list)  # (memory's key, reminder text)


class MemoryRecall:
    """Recalls for sent messages (a newer message makes an older one's recall stale) and for
    drafts (at most one in flight; the newest draft waiting while it runs; the newest settled
    one kept while a newer one runs, since the message may extend either)."""

    def __init__(
        self,
        memories: MemoryScopes | MemoryStore,
        llm: ModelClient,
        *,
        clock: Callable[[], float] = time.time,
        on_settled: Callable[[], None] | None = None,
        on_recalled: Callable[[tuple[str, ...]], None] | None = None,
        ready: Callable[[], None] = lambda: None,
        enabled: bool = True,
    ) -> None:
        self.memories = MemoryScopes.of(memories)
        self.llm = llm
        self.ready = ready  # waited for before the first recall (memory start-up: whose memories)
        self.enabled = enabled  # False: automatic memory is off (MINI_CLAUDE_MEMORY=off)
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
        (`adds_little`); a failed draft recall stands for nothing. What an earlier message's recall
        chose but did not reach its turn in time is dropped: this message's own recall decides."""
        with self._lock:
            for job in self._messages:
                job.stale = True
            self._messages, self._settled = [], []
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
        if not self.enabled or self.injected_bytes >= SESSION_INJECTION_BUDGET_BYTES:
            return False
        return self.memories.has_memories()

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
        self.ready()
        now = self.clock()
        candidates = self._candidates(query, now)
        if not candidates:
            return []
        chosen = select_relevant(self.llm, query, candidates, now)
        by_key = {m.key: m for m in candidates}
        root = self.memories.project_root
        checks = check_paths([by_key[key] for key in chosen], root) if root is not None else {}
        reminders = []
        for key in chosen:
            memory = by_key[key]
            try:
                found = self.memories.store_of(memory).read_text(memory, MEMORY_CONTENT_MAX_BYTES)
            except OSError as error:
                log.info("memory %s unreadable: %s", key, error)
                continue
            notes = [check.line() for check in checks.get(key, [])]
            if condition := expiry_condition(memory):
                notes.append(prompts.notice("memory_expires_when", condition=condition))
            reminders.append((key, reminder_text(memory, found.text, found.was_cut, now, notes)))
        log.info("memory recall chose %s for %r", [key for key, _ in reminders], query[:80])
        return reminders

    def _candidates(self, query: str, now: float) -> list[MemoryFile]:
        """The memories of every scope most relevant to `query`, each scope's ranking taken in
        turn; never one surfaced already, hidden by a narrower one of its name, or expired."""
        stores = self.memories.stores()
        hidden = (
            self.memories.shadowed([m for store in stores for m in store.scan()]) if len(stores) > 1 else {}
        )
        ranked = []
        for store in stores:
            surfaced = {key.rpartition("/")[2] for key in self.surfaced if _scope_of(key) == store.scope}
            found = ranking_for(store).candidates(query, MANIFEST_MAX_MEMORIES, surfaced, now)
            ranked.append([m for m in found if m.key not in hidden and not expired(m, now)])
        merged = [m for row in itertools.zip_longest(*ranked) for m in row if m is not None]
        return merged[:MANIFEST_MAX_MEMORIES]


def _scope_of(key: str) -> str:
    return key.rpartition("/")[0] or "project"
