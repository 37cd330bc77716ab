"""Tidy: the side model reviews every memory of the project and proposes changes (a `Proposal`,
see memory/tidy/proposal.py), which the user reviews before anything is applied (memory/tidy/apply.py).

The protocol: up to TIDY_BATCH_MEMORIES memories are one batch:
1. their headers (file name, type, age, recall history, name, description) → the model answers
   `{"read": [...]}`, the memories it needs to see whole;
2. the text of those → `{"changes": [...]}` (change, delete, or create).
More memories are shown all at once, headers first (memory/tidy/overview.py): every header, in as few
calls as fit → `{"groups": [[...], ...]}`, the memories worth reading together; then step 2 for
each group. Then, when saved sessions exist, one more query with every memory's header and
excerpts of the recent conversations → `{"changes": [...]}` of new memories only. A failed model
call stops the whole tidy (`TidyFailed`): nothing is proposed and nothing changes.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from mini_claude.core import prompts
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import contained, wrap
from mini_claude.llm.client import ModelClient
from mini_claude.memory.recall.history import UNUSED_DAYS, RecallHistory, recall_note
from mini_claude.memory.recall.ranking import ranking_for
from mini_claude.memory.recall.selection import age_text
from mini_claude.memory.staleness import doubts
from mini_claude.memory.store.index import clean_inline
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.tidy.answers import AnswerError, parse_changes, parse_groups, parse_read_request
from mini_claude.memory.tidy.hint import note_tidied
from mini_claude.memory.tidy.overview import OVERVIEW_MAX_GROUPS, alike_order, overview_parts
from mini_claude.memory.tidy.proposal import (
    TIDY_MEMORY_MAX_BYTES,
    Proposal,
    ProposalBuilder,
    ReadMemory,
    read_memory,
)
from mini_claude.memory.tidy.sources import recent_conversations

log = logging.getLogger("mini_claude")
T = TypeVar("T")

TIDY_BATCH_MEMORIES = 40  # up to this many, one batch; more are shown headers first
TIDY_MAX_MEMORIES = 2000  # beyond, a focus picks which (see `_chosen`)
TIDY_MAX_READS = 12  # memories read whole per batch or group
HEADER_FIELD_MAX_CHARS = 150
FOCUS_MAX_CHARS = 500
READ_MAX_TOKENS = 800
GROUPS_MAX_TOKENS = 4000  # 20 groups of 12 file names
CHANGES_MAX_TOKENS = 12_000
# Seconds; the answers are long, and the user asked for them. MINI_CLAUDE_SIDE_QUERY_TIMEOUT, which
# a timeout's message names, still raises it.
TIDY_SIDE_QUERY_TIMEOUT = 180.0
MAX_CREATES_FROM_SESSIONS = 10


class TidyFailed(Exception):
    """A model call failed: the tidy proposes nothing. The message says which call, in one line."""


class TidyReview:
    """Builds one proposal: `propose(focus)`. `progress` hears one short line per step."""

    def __init__(
        self,
        store: MemoryStore,
        llm: ModelClient,
        *,
        sessions_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
        progress: Callable[[str], None] = lambda line: None,
        side_query_timeout: float = 0.0,
        project_root: Path | None = None,
    ) -> None:
        self.store, self.llm, self.sessions_dir = store, llm, sessions_dir
        self.project_root = project_root  # where its memories' `paths:` are checked (staleness.py)
        self._doubts: dict[str, list[str]] = {}
        self.timeout = max(TIDY_SIDE_QUERY_TIMEOUT, side_query_timeout)
        self.clock, self.progress = clock, progress

    def propose(self, focus: str = "") -> Proposal:
        """MemoryStoreError when the memory folder must not be used; TidyFailed when a model call failed."""
        if (problem := self.store.root_problem()) is not None:
            raise MemoryStoreError(problem)
        now = self.clock()
        focus = clean_inline(focus, FOCUS_MAX_CHARS)
        self._focus = prompts.render("memory_tidy_focus.md", focus=contained(focus, "focus")) if focus else ""
        self._system = prompts.render(
            "memory_tidy.md", today=_today(now), max_bytes=TIDY_MEMORY_MAX_BYTES, unused_days=UNUSED_DAYS
        )
        self._now, self._history = now, RecallHistory(self.store.root).load()
        memories = self.store.scan()
        usable = [m for m in memories if m.problem is None and m.file_name.isprintable()]
        self._builder = ProposalBuilder(memories, os.listdir(self.store.root) if memories else [])
        proposal = self._builder.proposal
        if skipped := len(memories) - len(usable):
            proposal.notes.append(
                f"{skipped} memory files were not reviewed: broken frontmatter or an unprintable file name"
            )
        # Those that may no longer hold (expired, about files changed since) come first, marked.
        self._doubts = doubts(usable, self.project_root, now)
        chosen = sorted(alike_order(self._chosen(usable, focus)), key=lambda m: m.key not in self._doubts)
        if len(chosen) > TIDY_BATCH_MEMORIES:
            self._review_by_headers(chosen)
        elif chosen:
            self.progress(f"Reviewing {len(chosen):,} memories in 1 batch…")
            self._review_batch(chosen)
        proposal.reviewed = len(chosen)
        if self.sessions_dir is not None:
            self._review_sessions(usable)
        note_tidied(self.store.root, now)  # the weekly hint need not suggest what was just done
        return self._builder.finish()

    def _chosen(self, usable: list[MemoryFile], focus: str) -> list[MemoryFile]:
        if len(usable) <= TIDY_MAX_MEMORIES:
            return usable
        if focus:
            chosen = ranking_for(self.store).candidates(focus, TIDY_MAX_MEMORIES, (), self._now)
            how = "most related to the focus"
        else:
            chosen = sorted(usable, key=lambda m: m.mtime)[:TIDY_MAX_MEMORIES]
            how = "oldest"
        self._builder.proposal.notes.append(
            f"{len(usable):,} memories: the {TIDY_MAX_MEMORIES:,} {how} were reviewed "
            "(give a focus, e.g. /memory tidy deadlines, to choose others)"
        )
        return chosen

    def _review_batch(self, batch: list[MemoryFile]) -> None:
        where = "batch 1 of 1"
        headers = "\n".join(self._header_line(m) for m in batch)
        values = {"focus": self._focus, "batch": 1, "batches": 1, "headers": contained(headers, "memories")}
        user = prompts.render("memory_tidy_headers.md", **values, count=len(batch), max_reads=TIDY_MAX_READS)
        answer = self._ask(user, READ_MAX_TOKENS, where)
        allowed = [m.file_name for m in batch]
        wanted = self._parsed(where, parse_read_request, answer, allowed, TIDY_MAX_READS)
        if wanted is not None:
            self._review_bodies(batch, wanted, where, "Batch 1 of 1")

    def _review_by_headers(self, memories: list[MemoryFile]) -> None:
        """Every header, in as few calls as fit; then each group the model named, read whole."""
        lines = [self._header_line(m) for m in memories]
        parts = overview_parts(lines)
        calls = "1 call" if len(parts) == 1 else f"{len(parts)} calls"
        self.progress(f"Reviewing {len(memories):,} memories: their headers first, in {calls}…")
        groups: list[list[MemoryFile]] = []
        by_name = {m.file_name: m for m in memories}
        for number, part in enumerate(parts, 1):
            where = f"the headers (part {number} of {len(parts)})"
            headers = contained("\n".join(lines[i] for i in part), "memories")
            user = prompts.render(
                "memory_tidy_overview.md", focus=self._focus, total=f"{len(memories):,}", count=len(part),
                part=number, parts=len(parts), headers=headers, max_groups=OVERVIEW_MAX_GROUPS,
                max_reads=TIDY_MAX_READS,
            )  # fmt: skip
            answer = self._ask(user, GROUPS_MAX_TOKENS, where)
            allowed = [memories[i].file_name for i in part]
            found = self._parsed(where, parse_groups, answer, allowed, OVERVIEW_MAX_GROUPS, TIDY_MAX_READS)
            groups += [[by_name[name] for name in group] for group in found or []]
        for number, group in enumerate(groups, 1):
            self.progress(f"Group {number} of {len(groups)}…")
            where = f"group {number} of {len(groups)}"
            title = f"Group {number} of {len(groups)} of the memories you picked from all the headers"
            self._review_bodies(group, [m.file_name for m in group], where, title)

    def _review_bodies(self, shown: list[MemoryFile], wanted: list[str], where: str, part: str) -> None:
        """Read `wanted` (of `shown`, whose headers go along for context) and take the changes."""
        by_name = {m.file_name: m for m in shown}
        read: dict[str, ReadMemory] = {}
        for file_name in wanted:
            try:
                read[file_name] = read_memory(self.store, file_name)
            except OSError as error:
                self._builder.drop(
                    f"{where}: {visible_path(file_name)} not read: {safe_read.describe(error)}"
                )
        if not read:
            return
        headers = contained("\n".join(self._header_line(m) for m in shown), "memories")
        bodies = "\n\n".join(self._body_block(by_name[name], found) for name, found in read.items())
        user = prompts.render(
            "memory_tidy_bodies.md", focus=self._focus, part=part, headers=headers, bodies=bodies
        )
        self._take_changes(self._ask(user, CHANGES_MAX_TOKENS, where), where, read)

    def _review_sessions(self, usable: list[MemoryFile]) -> None:
        assert self.sessions_dir is not None
        excerpts, problems = recent_conversations(self.sessions_dir, self._now)
        for line in problems:
            log.info("tidy: %s", line)
        if not excerpts:
            return
        self.progress(f"Reading the last {len(excerpts)} sessions…")
        headers = "\n".join(self._header_line(m, history=False) for m in usable[:TIDY_MAX_MEMORIES])
        user = prompts.render(
            "memory_tidy_sessions.md", focus=self._focus, headers=contained(headers, "memories"),
            sessions=len(excerpts), conversations="\n\n".join(e.wrapped() for e in excerpts),
            max_creates=MAX_CREATES_FROM_SESSIONS,
        )  # fmt: skip
        self._take_changes(
            self._ask(user, CHANGES_MAX_TOKENS, "the sessions"), "sessions", {}, creates_only=True
        )

    def _ask(self, user: str, max_tokens: int, where: str) -> str:
        timeout = self.timeout
        try:
            return self.llm.side_query(
                system=self._system, user=user, max_tokens=max_tokens, timeout=timeout, purpose="tidy"
            )
        except Exception as error:  # the SDK's, the network's: every one stops the tidy alike
            raise TidyFailed(f"the model call for {where} failed: {error}") from error

    def _take_changes(
        self, answer: str, where: str, read: dict[str, ReadMemory], *, creates_only: bool = False
    ) -> None:
        created = 0
        for raw in self._parsed(where, parse_changes, answer) or []:
            if creates_only and raw.action != "create":
                self._builder.drop(
                    f"{where}: only new memories are taken from sessions; a {raw.action} was not"
                )
            elif creates_only and created == MAX_CREATES_FROM_SESSIONS:
                self._builder.drop(
                    f"{where}: more than {MAX_CREATES_FROM_SESSIONS} new memories; the rest left out"
                )
                break
            else:
                created += self._builder.take(raw, read, where)

    def _parsed(self, where: str, parse: Callable[..., tuple[T, list[str]]], *args: Any) -> T | None:
        """What `parse(*args)` makes of an answer, each part it left out dropped with a line; None
        (and a line) when the answer holds nothing usable."""
        try:
            found, left_out = parse(*args)
        except AnswerError as error:
            self._builder.drop(f"{where}: {error}; nothing proposed from this answer")
            return None
        for line in left_out:
            self._builder.drop(f"{where}: {line}")
        return found

    def _header_line(self, memory: MemoryFile, *, history: bool = True) -> str:
        fields = [memory.file_name, memory.type]
        if history:
            fields.append(f"saved {age_text(memory.mtime, self._now)}")
            note = recall_note(self._history.entries.get(memory.file_name), self._now) or "never recalled"
            if self._history.unused_for_long(memory.file_name, memory.mtime, self._now):
                note += f" (not in {UNUSED_DAYS} days: worth a look, not a reason to delete)"
            fields.append(note)
        fields += [
            clean_inline(memory.name, HEADER_FIELD_MAX_CHARS),
            clean_inline(memory.description, HEADER_FIELD_MAX_CHARS),
        ]
        if why := self._doubts.get(memory.key):
            fields.append(clean_inline("MAY NO LONGER HOLD: " + "; ".join(why), HEADER_FIELD_MAX_CHARS))
        return " | ".join(fields)

    def _body_block(self, memory: MemoryFile, found: ReadMemory) -> str:
        attributes = {"file": memory.file_name, "saved": age_text(memory.mtime, self._now)}
        if not found.whole:
            attributes["cut"] = "longer than shown"
        return wrap("memory", found.text, **attributes)


def _today(now: float) -> str:
    day = dt.datetime.fromtimestamp(now).date()
    return f"{day.isoformat()} ({day.strftime('%A')})"
