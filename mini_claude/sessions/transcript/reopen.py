"""Reopening a saved transcript to append to it (a resumed session), and telling whether another
mini-claude has one open.

Apart from writer.py because both hinge on the exclusive `flock` a writer holds on its file,
and reopening is the careful part: the file may be a symlink or a hard link (appending would
write to a file outside the folder), someone else's, replaced meanwhile, open elsewhere, too open
to others, or end in a torn line.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path
from typing import NamedTuple

from mini_claude.core.files.private_files import FILE_MODE, OTHERS_BITS
from mini_claude.core.files.safe_read import owner_problem
from mini_claude.sessions.transcript.records import MAX_TRANSCRIPT_BYTES, RECORD_ROLES
from mini_claude.sessions.transcript.sessions_folder import open_sessions_dir
from mini_claude.sessions.transcript.tail import last_record, read_tail

EXISTING_FILE_FLAGS = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class SessionInUse(Exception):
    """Another mini-claude has this transcript open."""


class Reopened(NamedTuple):
    """A transcript open for appending, under our lock, ending with a whole line."""

    fd: int
    size: int
    message_count: int  # the conversation's message count after the last record
    last_role: str | None  # the role of the last record that added content


def reopen_transcript(path: Path, fd: int | None = None) -> Reopened:
    """Open the transcript at `path` for appending (or take `fd`, a descriptor of it open for
    appending and locked already: a copy just made). Raises SessionInUse when another mini-claude
    has it open; OSError or SessionsFolderError when it cannot be used (the descriptor closed)."""
    locked = fd is not None
    if fd is None:
        dir_fd = open_sessions_dir(path.parent, create=True)
        assert dir_fd is not None
        try:
            fd = os.open(path.name, EXISTING_FILE_FLAGS, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file")
        if info.st_nlink > 1:  # as a symlink would, it would carry the conversation elsewhere
            raise OSError(
                errno.EMLINK,
                "it has another name (a hard link), and transcripts are never written through one",
            )
        if (foreign := owner_problem(path, info)) is not None:
            raise OSError(errno.EPERM, foreign)
        try:
            if not locked:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SessionInUse(f"session {path.stem} is open in another mini-claude") from None
        except OSError:
            pass  # a filesystem without locks: saved all the same
        if os.stat(path, follow_symlinks=False).st_ino != info.st_ino:
            raise OSError(0, "it was removed or replaced meanwhile")
        if info.st_mode & OTHERS_BITS:
            os.fchmod(fd, FILE_MODE)
        return Reopened(fd, *_mend_torn_end(fd, info.st_size))
    except BaseException:
        os.close(fd)
        raise


def _mend_torn_end(fd: int, size: int) -> tuple[int, int, str | None]:
    """Make the file end with a whole line before appending (else the next record would be glued
    to a torn one and lost with it). Returns the size, the message count and the last role."""
    tail = read_tail(fd, size, fragment_max=MAX_TRANSCRIPT_BYTES)  # never cut a whole record
    if tail.fragment_is_record:
        os.write(fd, b"\n")  # a whole record whose newline an editor removed
        size += 1
    elif tail.fragment_size:
        os.ftruncate(fd, tail.complete_end)  # half a record from a crash: nothing to keep
        size = tail.complete_end
        tail = read_tail(fd, size)
    kind, count = last_record(fd, tail) or ("", 0)
    return size, count, RECORD_ROLES.get(kind)


def is_in_use(path: Path) -> bool:
    """True when another mini-claude is writing this transcript (it holds the lock)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False
