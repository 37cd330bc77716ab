"""The system prompt built ahead of the first message, while the user types.

Building it reads and wraps the memory index; done on the first message, that work would sit
between Enter and the reply's first token. A prompt built ahead is used only if nothing it was
built from has changed since (the files are compared by inode, size and mtime; and the date).
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections.abc import Callable
from pathlib import Path

_Stamp = tuple[dt.date, tuple[tuple[int, int, int] | None, ...]]


class PreparedPrompt:
    """Call it for the system prompt; `prepare()` (on a background thread) builds one ahead."""

    def __init__(self, build: Callable[[], str], sources: tuple[Path, ...]) -> None:
        self._build = build
        self._sources = sources  # every file or folder the prompt is built from
        self._lock = threading.Lock()
        self._prepared: tuple[_Stamp, str] | None = None

    def prepare(self) -> None:
        before = self._stamp()
        text = self._build()
        if self._stamp() == before:  # nothing changed while it was being built
            with self._lock:
                self._prepared = (before, text)

    def __call__(self) -> str:
        with self._lock:
            prepared, self._prepared = self._prepared, None  # each prompt built ahead is used once
        if prepared is not None and prepared[0] == self._stamp():
            return prepared[1]
        return self._build()

    def _stamp(self) -> _Stamp:
        return dt.date.today(), tuple(_file_stamp(path) for path in self._sources)


def _file_stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns
