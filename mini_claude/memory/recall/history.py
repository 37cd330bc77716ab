"""How often, and when last, each memory reached a conversation: `.recall-history.json` beside the
memories (a dot file, so no memory; never inside the memory files, so hand edits stay clean).

Updated by read-modify-write under the memory folder's lock, so concurrent sessions lose no counts,
and on a thread of its own, so recall never waits for the disk (a write takes 15-35 ms: a lock,
a read, an fsync). Writes still running when the program exits (print mode ends right after its
reply) are waited for, up to EXIT_WAIT_SECONDS in all. The file is read like any outside file: a
symlink, FIFO, huge or malformed one is reported and rebuilt, never trusted.
"""

from __future__ import annotations

import atexit
import json
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read, strict_json
from mini_claude.core.files.atomic import write_atomic
from mini_claude.memory.recall.selection import age_text
from mini_claude.memory.store import memory_folder
from mini_claude.memory.store.naming import is_memory_file_name

log = logging.getLogger("mini_claude")

HISTORY_FILE = ".recall-history.json"
HISTORY_FORMAT = 1
HISTORY_MAX_BYTES = 4 * 2**20  # ~60 bytes an entry: far more than MAX_ENTRIES take
MAX_ENTRIES = 50_000  # beyond it the least recently recalled are forgotten
MAX_COUNT = 10**9
FILE_NAME_MAX_BYTES = 255
FUTURE_SLACK_SECONDS = 86_400  # another machine's clock a day ahead is tolerated; further is not ours
UNUSED_DAYS = 90  # not recalled for this long: worth a look at tidy time (never a reason to delete)
DAY_SECONDS = 86_400
# At exit, the writes still running get this long in all: the folder's lock may be held by another
# session, and exiting must not hang on it.
EXIT_WAIT_SECONDS = 3.0

_pending: set[threading.Thread] = set()  # writes not finished yet, waited for at exit
_pending_lock = threading.Lock()
_exit_wait_registered = False


@dataclass(frozen=True)
class RecallStats:
    count: int
    last: float  # when it last reached a conversation (seconds since the epoch)


@dataclass(frozen=True)
class HistorySnapshot:
    since: float | None = None  # when the history was started; None before the first recall
    entries: dict[str, RecallStats] = field(default_factory=dict)  # by memory file name
    problem: str | None = None  # why (part of) the file was not used, one line

    def unused_for_long(self, file_name: str, saved: float, now: float) -> bool:
        """Saved, and not recalled, for UNUSED_DAYS, by a history that covers that long."""
        horizon = now - UNUSED_DAYS * DAY_SECONDS
        if self.since is None or self.since > horizon or saved > horizon:
            return False
        stats = self.entries.get(file_name)
        return stats is None or stats.last < horizon


class RecallHistory:
    """The history of one memory folder; `record_in_background` is what recall calls."""

    def __init__(self, root: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.root = Path(root)
        self.clock = clock

    @property
    def path(self) -> Path:
        return self.root / HISTORY_FILE

    def load(self) -> HistorySnapshot:
        """The history as saved (whole: it is replaced atomically, so no lock is needed to read it)."""
        if memory_folder.escape_problem(self.root) is not None:
            return HistorySnapshot()
        try:
            found = safe_read.read_bytes(
                self.path, self.root, HISTORY_MAX_BYTES, follow_symlink=False, owner_only=True
            )
        except FileNotFoundError:
            return HistorySnapshot()
        except OSError as error:
            return HistorySnapshot(problem=f"{HISTORY_FILE} not read: {safe_read.describe(error)}")
        if found.was_cut:
            size = safe_read.format_size(found.size)
            limit = safe_read.format_size(HISTORY_MAX_BYTES)
            return HistorySnapshot(problem=f"{HISTORY_FILE} is {size}, over the {limit} limit: not read")
        return parse_history(found.data, self.clock())

    def record(self, file_names: Sequence[str], at: float | None = None) -> None:
        """Count one recall of each memory, at `at` (now by default)."""
        at = self.clock() if at is None else at
        with memory_folder.exclusive_lock(self.root):
            snapshot = self.load()
            if snapshot.problem:
                log.warning("recall history: %s; rebuilt from what was usable", snapshot.problem)
            entries = dict(snapshot.entries)
            for name in dict.fromkeys(file_names):
                before = entries.get(name, RecallStats(0, 0.0))
                entries[name] = RecallStats(min(before.count + 1, MAX_COUNT), max(before.last, at))
            self._write_locked(at if snapshot.since is None else snapshot.since, entries)

    def record_in_background(self, file_names: Sequence[str]) -> None:
        """`record` on a daemon thread: the agent, which calls this before a model call, never waits."""
        names, at = tuple(file_names), self.clock()
        _wait_at_exit()
        thread = threading.Thread(
            target=self._record_quietly, args=(names, at), name="recall-history", daemon=True
        )
        with _pending_lock:
            _pending.add(thread)
        try:
            thread.start()
        except RuntimeError as error:  # no thread to be had: this count is lost, the session goes on
            with _pending_lock:
                _pending.discard(thread)
            log.warning("recall history not updated: %s", error)

    def _record_quietly(self, names: tuple[str, ...], at: float) -> None:
        try:
            self.record(names, at)
        except (MemoryStoreError, OSError) as error:
            log.warning("recall history not updated: %s", error)
        finally:
            with _pending_lock:
                _pending.discard(threading.current_thread())

    def _write_locked(self, since: float, entries: dict[str, RecallStats]) -> None:
        # Memories that are gone take their history with them: the file stays the folder's size.
        present = {name for name in os.listdir(self.root) if is_memory_file_name(name)}
        kept = {name: stats for name, stats in entries.items() if name in present}
        if len(kept) > MAX_ENTRIES:
            newest = sorted(kept.items(), key=lambda item: -item[1].last)[:MAX_ENTRIES]
            kept = dict(newest)
        document = {
            "format": HISTORY_FORMAT,
            "since": since,
            "memories": {name: {"count": s.count, "last": s.last} for name, s in sorted(kept.items())},
        }
        write_atomic(self.path, json.dumps(document, ensure_ascii=False, indent=0) + "\n")


def finish_pending_writes(timeout: float = EXIT_WAIT_SECONDS) -> int:
    """Wait for the history writes still running, `timeout` seconds in all; how many did not end."""
    deadline = time.monotonic() + timeout
    with _pending_lock:
        running = list(_pending)
    for thread in running:
        thread.join(max(0.0, deadline - time.monotonic()))
    unfinished = sum(thread.is_alive() for thread in running)
    if unfinished:
        log.warning(
            "recall history: %d update(s) not written before exit (the folder stayed locked)", unfinished
        )
    return unfinished


def _wait_at_exit() -> None:
    """Registered on the first write, not at import: importing this module does nothing."""
    global _exit_wait_registered
    with _pending_lock:
        if not _exit_wait_registered:
            atexit.register(finish_pending_writes)
            _exit_wait_registered = True


def parse_history(data: bytes, now: float) -> HistorySnapshot:
    """What of `data` can be used: entries with a memory file name, a whole count and a time not
    in the future; everything else is dropped and said so in `problem`."""
    try:
        value = strict_json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return HistorySnapshot(problem=f"{HISTORY_FILE} is not valid JSON: not used")
    if not isinstance(value, dict) or value.get("format") != HISTORY_FORMAT:
        return HistorySnapshot(
            problem=f"{HISTORY_FILE} is not a recall history of format {HISTORY_FORMAT}: not used"
        )
    since = value.get("since")
    memories = value.get("memories")
    if not _is_time(since, now) or not isinstance(memories, dict):
        return HistorySnapshot(
            problem=f"{HISTORY_FILE} lacks a valid start time or list of memories: not used"
        )
    entries: dict[str, RecallStats] = {}
    bad = 0
    for name, stats in memories.items():
        if _is_entry(name, stats, now):
            entries[name] = RecallStats(stats["count"], float(stats["last"]))
        else:
            bad += 1
    problem = f"{HISTORY_FILE}: {bad} entries were not valid and are dropped" if bad else None
    return HistorySnapshot(float(since), entries, problem)


def _is_time(value: object, now: float) -> TypeGuard[int | float]:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= now + FUTURE_SLACK_SECONDS
    )


def _is_entry(name: object, stats: object, now: float) -> bool:
    if not isinstance(name, str) or not is_memory_file_name(name) or "/" in name or "\0" in name:
        return False
    if len(name.encode("utf-8", "surrogatepass")) > FILE_NAME_MAX_BYTES or not isinstance(stats, dict):
        return False
    count = stats.get("count")
    return (
        isinstance(count, int)
        and not isinstance(count, bool)
        and 1 <= count <= MAX_COUNT
        and _is_time(stats.get("last"), now)
    )


def recall_note(stats: RecallStats | None, now: float) -> str:
    """`recalled 3 times, last 2 days ago`, `recalled once, today`; "" when never recalled."""
    if stats is None:
        return ""
    when = age_text(stats.last, now)
    if stats.count == 1:
        return f"recalled once, {when}"
    return f"recalled {stats.count:,} times, last {when}"
