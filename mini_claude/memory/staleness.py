"""Memories that may no longer hold: one whose `expires:` date has passed, and one about files
(`paths:`) that changed after it was last written, or are gone.

When a file changed is asked of git in a repository (a clone or a checkout sets every file's
modification time to that moment; the history does not move): the newest commit that changed it,
or, for an edit not committed yet, the file's own time. Outside a repository, the file's time.
A memory's own time is the older of its file's time and its `updated:` (a team memory's file is as
new as the checkout; a tidy rewrites words and keeps the file's time).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.paths import is_within
from mini_claude.memory import repository
from mini_claude.memory.provenance import parse_time
from mini_claude.memory.recall.history import DAY_SECONDS
from mini_claude.memory.store.memory_file import MemoryFile

PATHS_CHECKED_MAX = 10  # of one memory; a memory about more files is about none in particular
FOLDER_ENTRIES_MAX = 1000  # outside git, a folder changed when one of its first entries did
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class PathCheck:
    path: str  # as the memory names it
    changed_after: float | None = None  # seconds after the memory it changed; None: it did not
    gone: bool = False
    outside: bool = False  # outside the project: not checked

    def line(self) -> str:
        """One line for the model (the recall reminder)."""
        if self.outside:
            return prompts.notice("memory_path_outside", path=self.path)
        if self.gone:
            return prompts.notice("memory_path_gone", path=self.path)
        return prompts.notice("memory_path_changed", path=self.path, when=_later(self.changed_after or 0))

    def mark(self) -> str:
        """A few words for `/memory`."""
        if self.gone:
            return f"{self.path} is gone"
        return f"{self.path} changed {_later(self.changed_after or 0)} it"


def expiry_date(memory: MemoryFile) -> dt.date | None:
    """The date in `expires:`; None when it holds none (no expiry, or a condition in words)."""
    value = memory.expires.strip()
    if not _DATE.fullmatch(value):
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def expired(memory: MemoryFile, now: float) -> bool:
    """Past its `expires:` date (it holds through that day)."""
    date = expiry_date(memory)
    return date is not None and dt.datetime.fromtimestamp(now).date() > date


def expiry_condition(memory: MemoryFile) -> str:
    """An `expires:` that is no date: a condition the user wrote, for the model to judge."""
    value = memory.expires.strip()
    return value if value and expiry_date(memory) is None and not _DATE.match(value) else ""


def memory_time(memory: MemoryFile) -> float:
    updated = parse_time(memory.updated) if memory.updated else None
    return min(memory.mtime, updated) if updated is not None else memory.mtime


def check_paths(memories: Sequence[MemoryFile], project_root: Path) -> dict[str, list[PathCheck]]:
    """Key of each memory naming files → what became of them since it was written: one git
    history read for them all."""
    named = {m.key: m.paths[:PATHS_CHECKED_MAX] for m in memories if m.paths}
    if not named:
        return {}
    root = Path(os.path.realpath(project_root))
    places = {path: _place(root, path) for paths in named.values() for path in paths}
    inside = sorted({path for path, place in places.items() if place is not None})
    since = min(memory_time(m) for m in memories if m.key in named)
    commits = repository.last_commit_times(root, inside, since) if inside else {}
    in_git = repository.git(root, "rev-parse", "--is-inside-work-tree") is not None if inside else False
    files = [path for path in inside if _is_file(places[path])]
    edited = repository.differs_from_head(root, files) if in_git else None
    times = {
        path: _changed(places[path], commits.get(path), None if edited is None else path in edited)
        for path in inside
    }
    found: dict[str, list[PathCheck]] = {}
    for memory in memories:
        since = memory_time(memory)
        checks = []
        for path in named.get(memory.key, ()):
            if places[path] is None:
                checks.append(PathCheck(path, outside=True))
            elif (when := times[path]) is None:
                checks.append(PathCheck(path, gone=True))
            elif when > since:
                checks.append(PathCheck(path, changed_after=when - since))
        if checks:
            found[memory.key] = checks
    return found


def doubts(memories: Sequence[MemoryFile], project_root: Path | None, now: float) -> dict[str, list[str]]:
    """Key of each memory that may no longer hold → a few words each on why (`expired 2026-01-01`,
    `src/db.py changed 3 days after it`): what `/memory` marks and `/memory tidy` offers first."""
    changed = check_paths(memories, project_root) if project_root is not None else {}
    found: dict[str, list[str]] = {}
    for memory in memories:
        why = [f"expired {memory.expires.strip()}"] if expired(memory, now) else []
        why += [check.mark() for check in changed.get(memory.key, []) if not check.outside]
        if why:
            found[memory.key] = why
    return found


def _place(root: Path, path: str) -> Path | None:
    """Where `path` (relative to the project, or absolute) is, resolved; None outside the project."""
    real = Path(os.path.realpath(root / os.path.expanduser(path)))
    return real if is_within(real, root) else None


def _is_file(place: Path | None) -> bool:
    try:
        return place is not None and stat.S_ISREG(os.stat(place).st_mode)
    except OSError:
        return False


def _changed(place: Path | None, committed: float | None, edited: bool | None) -> float | None:
    """When the file at `place` last changed (0: not since the history read); None: it is gone.
    `edited`: whether git sees an edit not committed yet (None: outside git, the file's time counts)."""
    assert place is not None
    try:
        info = os.stat(place)
    except OSError:
        return None
    if edited is None and committed is None:
        return _newest_time(place, info)
    return max(committed or 0.0, info.st_mtime if edited else 0.0)


def _newest_time(place: Path, info: os.stat_result) -> float:
    """A file's time; a folder's, or the newest of its first entries'."""
    newest = info.st_mtime
    if stat.S_ISDIR(info.st_mode):
        try:
            with os.scandir(place) as entries:
                for count, entry in enumerate(entries):
                    if count >= FOLDER_ENTRIES_MAX:
                        break
                    newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
        except OSError:
            pass
    return newest


def _later(seconds: float) -> str:
    """`3 days after`, `1 day after`, `after` (within half a day); to the nearest day."""
    days = round(seconds / DAY_SECONDS)
    return {0: "after", 1: "1 day after"}.get(days, f"{days} days after")
