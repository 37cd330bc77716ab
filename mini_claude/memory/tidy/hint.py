"""The start-up hint: one quiet line when tidying the memories looks worthwhile, at most once a week.

Cheap and bounded (it runs on the memory start-up thread, after the index is rebuilt): the
headers the store has just read, the bodies of at most HINT_BODY_SAMPLE memories, no model call.
When it was last shown, or a tidy last applied, is kept in `tidy-hint.json` in the project's
state folder (beside `memory/`); a file there that cannot be used counts as "never".
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import re
from pathlib import Path

from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import write_atomic
from mini_claude.memory.recall.history import DAY_SECONDS, RecallHistory
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.tidy.likeness import similar_pairs

log = logging.getLogger("mini_claude")

HINT_STATE_FILE = "tidy-hint.json"
HINT_STATE_MAX_BYTES = 4096
HINT_INTERVAL_DAYS = 7
HINT_MIN_MEMORIES = 5  # fewer: nothing worth a tidy
MANY_MEMORIES = 150  # this many is worth a look whatever else
HINT_MIN_UNUSED = 10  # memories not recalled for 90 days before they are worth a mention
HINT_BODY_SAMPLE = 50  # bodies read for dates, the oldest memories first
HINT_BODY_BYTES = 2048
HINT_SCAN_MAX_MEMORIES = 5000  # headers compared for duplicates (the newest)
STALE_AFTER_DAYS = 7  # a "tomorrow" in a memory saved longer ago than this is a date long past
_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)"
RELATIVE_DATE = re.compile(
    rf"\b(?:today|tonight|tomorrow|yesterday|this (?:week|month|quarter|{_DAY})|"
    rf"next (?:week|month|quarter|year|{_DAY})|last (?:week|month)|by {_DAY}|"
    r"end of (?:the )?(?:week|month)|in (?:a|one|two|three|four|a few|\d+) (?:days?|weeks?|months?))\b",
    re.IGNORECASE,
)
DEADLINE_DATE = re.compile(
    r"\b(?:by|until|due|deadline|before|freeze|release[sd]?)\b[^\n.]{0,30}?\b(\d{4})-(\d{2})-(\d{2})\b",
    re.IGNORECASE,
)


def hint_line(store: MemoryStore, now: float) -> str | None:
    """What the hint says for the folder now, or None when tidying looks not worth it."""
    memories = [m for m in store.scan(limit=HINT_SCAN_MAX_MEMORIES) if m.problem is None]
    if len(memories) < HINT_MIN_MEMORIES:
        return None
    reasons = []
    if alike := len({index for pair in similar_pairs(memories) for index in pair}):
        reasons.append(f"{alike} memories look like duplicates")
    if dated := _with_past_dates(store, memories, now):
        reasons.append(f"{dated} {'memory mentions' if dated == 1 else 'memories mention'} dates now past")
    history = RecallHistory(store.root).load()
    unused = sum(history.unused_for_long(m.file_name, m.mtime, now) for m in memories)
    if unused >= HINT_MIN_UNUSED:
        reasons.append(f"{unused} not recalled in 90 days")
    if not reasons and len(memories) < MANY_MEMORIES:
        return None
    summary = ", ".join(reasons) if reasons else f"{len(memories):,} memories"
    return f"Memory: {summary}. /memory tidy reviews them with you (a hint shown at most once a week)."


def _with_past_dates(store: MemoryStore, memories: list[MemoryFile], now: float) -> int:
    today = dt.date.fromtimestamp(now)
    old = [m for m in memories if m.mtime < now - STALE_AFTER_DAYS * DAY_SECONDS]
    old.sort(key=lambda m: m.mtime)
    count = 0
    for memory in old[:HINT_BODY_SAMPLE]:
        try:
            text = store.read_text(memory, HINT_BODY_BYTES).text
        except OSError:
            continue
        if RELATIVE_DATE.search(text) or any(_before(match, today) for match in DEADLINE_DATE.finditer(text)):
            count += 1
    return count


def _before(match: re.Match[str], today: dt.date) -> bool:
    try:
        return dt.date(int(match[1]), int(match[2]), int(match[3])) < today
    except ValueError:
        return False


def state_path(memory_dir: Path) -> Path:
    return Path(memory_dir).parent / HINT_STATE_FILE


def last_noted(memory_dir: Path, now: float) -> float | None:
    """When the hint was last shown or a tidy applied; None when never (or the file is not usable)."""
    path = state_path(memory_dir)
    try:
        found = safe_read.read_bytes(
            path, path.parent, HINT_STATE_MAX_BYTES, follow_symlink=False, owner_only=True
        )
        value = json.loads(found.data.decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as error:
        log.info("tidy hint: %s not used: %s", path, error)
        return None
    noted = value.get("noted") if isinstance(value, dict) else None
    # NaN or Infinity, or a time in the future, is not ours (a clock that jumped, a hand edit): it
    # must not silence the hint.
    if not isinstance(noted, int | float) or isinstance(noted, bool) or not math.isfinite(noted):
        return None
    return float(noted) if 0 <= noted <= now else None


def note_tidied(memory_dir: Path, now: float) -> None:
    """Remember `now` as the hint's last showing (a tidy just ran: no hint for a week)."""
    try:
        write_atomic(state_path(memory_dir), json.dumps({"noted": now}) + "\n")
    except OSError as error:
        log.info("tidy hint: not noted: %s", error)


def weekly_hint(store: MemoryStore, now: float) -> str | None:
    """The hint, when one is due (and then noted as shown), else None."""
    noted = last_noted(store.root, now)
    if noted is not None and now - noted < HINT_INTERVAL_DAYS * DAY_SECONDS:
        return None
    line = hint_line(store, now)
    if line is not None:
        note_tidied(store.root, now)
    return line
