"""What a scan of some folders found, kept until one of the folders it looked at changes.

The safety checks that scan (home's dot folders for stow links, the project's folders for
repositories, a git directory for symlinks) run on every read or write: they would otherwise list
thousands of entries and resolve every link again each time. A folder's mtime and inode change
when an entry is added, removed or renamed in it, which is all a scan depends on.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

# A folder changed this recently may change again within its mtime's tick (FAT: 2 s): such a scan
# is not kept, so an entry added in the same tick is never missed.
MTIME_TICK_NS = 2_000_000_000

FolderState = tuple[str, int, int]  # (path, st_mtime_ns, st_ino); -1s when it could not be stat'ed
Key = TypeVar("Key")
Found = TypeVar("Found")


@dataclass(frozen=True)
class _Kept(Generic[Found]):
    folders: frozenset[FolderState]
    found: Found


class FolderCache(Generic[Key, Found]):
    """`scan(key)` returns the folders whose change could change its answer, and the answer."""

    def __init__(self, scan: Callable[[Key], tuple[Iterable[str], Found]]) -> None:
        self._scan = scan
        self._kept: dict[Key, _Kept[Found]] = {}
        self._lock = threading.Lock()

    def get(self, key: Key) -> Found:
        with self._lock:
            kept = self._kept.get(key)
        if kept is not None and all(folder_state(state[0]) == state for state in kept.folders):
            return kept.found
        started = time.time_ns()
        folders, found = self._scan(key)
        states = frozenset(folder_state(folder) for folder in folders)
        if all(mtime < started - MTIME_TICK_NS for _, mtime, _ in states):
            with self._lock:
                self._kept[key] = _Kept(states, found)
        return found


def folder_state(folder: str) -> FolderState:
    try:
        info = os.stat(folder)
    except OSError:
        return (folder, -1, -1)
    return (folder, info.st_mtime_ns, info.st_ino)
