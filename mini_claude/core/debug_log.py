"""The debug log: one file under the platform's log dir, never the terminal.

The log holds what the model asked for, so it is appended only to a regular file of our own: a
symlink there (`debug.log -> ~/.bashrc`) would carry that text into a file that runs, a hard link
likewise, and a FIFO would block the first record for ever. The log folder is ours: such an entry
is replaced by a new file; when that cannot be done (a folder there), this session logs nothing
and says so once. Rotation renames entries, which moves a link itself and never what it leads to.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import logging.handlers
import os
import stat
import sys
from io import TextIOWrapper
from pathlib import Path

from mini_claude.core.config import log_file
from mini_claude.core.files.private_files import FILE_MODE, narrow, private_folder
from mini_claude.core.paths import visible_path

LOG_MAX_BYTES = 1_000_000
LOG_FORMAT = "%(asctime)s %(process)d %(threadName)s %(name)s %(levelname)s %(message)s"
_OPEN_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def setup_logging() -> str | None:
    """Send our records (DEBUG up) and everyone else's warnings to the log file, not stderr.
    Returns a one-line warning for the user when the log cannot be written this session."""
    root = logging.getLogger()
    if any(getattr(h, "_mini_claude", False) for h in root.handlers):
        return None
    path = log_file()
    warning = None
    try:
        private_folder(path.parent)  # what was said and run in a session: for its user only
        handler: logging.Handler = OwnLogFile(path)
    except OSError as error:
        # An unusable log must not stop the agent.
        handler = logging.NullHandler()
        warning = f"not writing the debug log {visible_path(str(path))}: {error.strerror or error}"
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler._mini_claude = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("mini_claude").setLevel(logging.DEBUG)
    return warning


class OwnLogFile(logging.handlers.RotatingFileHandler):
    """A rotating log (one backup) that only ever appends to a regular file with no other link."""

    def __init__(self, path: Path) -> None:
        self._failed = False
        super().__init__(path, maxBytes=LOG_MAX_BYTES, backupCount=1, encoding="utf-8")

    def _open(self) -> TextIOWrapper:
        return open_own_file(Path(self.baseFilename))

    def shouldRollover(self, record: logging.LogRecord) -> bool:
        stream = self.stream = self.stream or self._open()
        stream.seek(0, os.SEEK_END)  # where other sessions' records took it
        return stream.tell() + len(self.format(record)) + 1 >= self.maxBytes

    def doRollover(self) -> None:
        if self.stream is not None:
            self.stream.close()
        with contextlib.suppress(OSError):  # a folder named debug.log.1: keep appending here instead
            os.replace(self.baseFilename, self.baseFilename + ".1")
        self.stream = self._open()

    def emit(self, record: logging.LogRecord) -> None:
        if not self._failed:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        """The log stopped working (reopened after rotation onto something not ours, a full
        disk): say so once, then log nothing more, rather than print a traceback per record."""
        if self._failed:
            return
        self._failed = True
        error = sys.exc_info()[1]
        reason = getattr(error, "strerror", None) or error
        print(f"mini-claude: the debug log stopped: {reason}", file=sys.stderr)


def open_own_file(path: Path) -> TextIOWrapper:
    """`path` opened for appending, created if missing: first a symlink, FIFO, device, socket,
    hard-linked file or someone else's file there is removed; then opened without following a
    link or blocking, and refused (OSError) unless it is a regular file of ours with one link."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        found = None
    if found is not None and not _own_regular_file(found):
        if stat.S_ISDIR(found.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a folder is in its place", str(path))
        os.unlink(path)  # our own folder: whatever was put here is not ours to write through
    fd = os.open(path, _OPEN_FLAGS, FILE_MODE)
    try:
        if not _own_regular_file(os.fstat(fd)):  # replaced again since: a race someone is running
            raise OSError(errno.EEXIST, "not a regular file of its own", str(path))
        narrow(fd, FILE_MODE, path)  # a log an older version left 0644
        os.set_blocking(fd, True)
        return os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace")
    except BaseException:
        os.close(fd)
        raise


def _own_regular_file(info: os.stat_result) -> bool:
    """A regular file with no other name, and ours: appending to someone else's would hand them
    what the log holds."""
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and info.st_uid == os.geteuid()
