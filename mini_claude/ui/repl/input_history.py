"""The REPL's input history (Up / Down): every line typed, a refused secret and `!` commands
included, so it is kept private as transcripts are: the file 0600 in a 0700 folder, whatever the
umask, and narrowed at start when an older version left it wider.

prompt-toolkit reads it whole at the first prompt and appends to it: it is used only when it is
a regular file in mini-claude's data folder, under HISTORY_MAX_BYTES (a FIFO would hang the
prompt, a symlink would leak another file into Up-arrow or get appended to).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from prompt_toolkit.history import FileHistory, History, InMemoryHistory

from mini_claude.core.config import history_file
from mini_claude.core.files import safe_read
from mini_claude.core.files.private_files import FILE_MODE, create_folders, make_private, private_folder
from mini_claude.core.paths import visible_path

HISTORY_MAX_BYTES = 10_000_000  # prompt-toolkit loads it whole; years of typing stay well below
# O_NONBLOCK: a FIFO put in its place fails at once (no reader) instead of hanging the start.
OPEN_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def open_history() -> tuple[History, str | None]:
    """The input history, and a one-line warning when this session keeps it in memory instead."""
    path = history_file()
    try:
        create_folders(path.parent)
    except OSError:
        return InMemoryHistory(), None  # an unwritable data dir costs history, not the session
    try:
        private_folder(path.parent)
        with contextlib.suppress(FileNotFoundError):  # the first session: created below
            safe_read.check_file(path, path.parent, HISTORY_MAX_BYTES, owner_only=True)
        # Created (or narrowed) here: prompt-toolkit's own append would make it 0644 under umask 022.
        make_private(Path(os.path.realpath(path)), OPEN_FLAGS, FILE_MODE)
    except OSError as error:
        warning = f"Input history not loaded: {_reason(error)}; this session keeps it in memory"
        return InMemoryHistory(), warning
    return FileHistory(os.fspath(path)), None


def _reason(error: OSError) -> str:
    if isinstance(error, safe_read.UnreadableFile) or not error.filename:
        return safe_read.describe(error)
    return f"{visible_path(str(error.filename))} cannot be made private: {error.strerror}"
