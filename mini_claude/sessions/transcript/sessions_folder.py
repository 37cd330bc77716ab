"""The sessions folder and the files in it: private, and never reached through a symlink.

Transcripts hold everything said in a session (file contents, command output), so the folder is
0700 and each file 0600. The folder may be a symlink only to a place inside the project's own
folder (`~/.mini-claude/projects/<hash>`); a transcript file is never opened through a symlink,
and only regular files are read (a FIFO would block, a device never end). A folder (or one above
it in `~/.mini-claude`) or a transcript that belongs to someone else is never read: a resumed
conversation would carry whatever they put there into the prompt.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path

from mini_claude.core.files.atomic import write_all
from mini_claude.core.files.private_files import (
    FILE_MODE,
    FOLDER_MODE,
    OTHERS_BITS,
    create_folders,
    foreign_level,
    narrow_levels,
)
from mini_claude.core.files.safe_read import owner_problem, read_capped
from mini_claude.core.paths import visible_path
from mini_claude.sessions.transcript.records import MAX_TRANSCRIPT_BYTES, too_large_problem

READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# A new transcript: never an existing file, never through a symlink; readable too, for a copy
# whose descriptor goes on to its writer (which reads its end).
NEW_FILE_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class SessionsFolderError(Exception):
    """The sessions folder cannot be used; the message says why in one line."""


class TranscriptError(Exception):
    """A transcript cannot be read; the message names the file and says why in one line."""


def open_sessions_dir(sessions_dir: Path, *, create: bool) -> int | None:
    """A descriptor of the sessions folder for `dir_fd=` calls (the caller closes it); None when
    it does not exist and `create` is False. With `create`, the folder is made 0700, or narrowed
    to 0700 when it exists with wider permissions: the privacy of transcripts is the promise, and
    the folder is ours alone."""
    project_dir = sessions_dir.parent
    if (foreign := foreign_level(sessions_dir)) is not None:  # what it holds may have been swapped in
        raise SessionsFolderError(f"{foreign}: transcripts are not read or kept there")
    if create:
        try:
            create_folders(project_dir)
            os.mkdir(sessions_dir, FOLDER_MODE)
        except FileExistsError:
            pass  # the folder (or something in its place, looked at below) is already there
        except OSError as error:
            raise SessionsFolderError(_cannot("create", sessions_dir, error)) from None
    try:
        info = os.lstat(sessions_dir)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SessionsFolderError(_cannot("use", sessions_dir, error)) from None
    target = sessions_dir
    if stat.S_ISLNK(info.st_mode):
        target = Path(os.path.realpath(sessions_dir))
        real_project = Path(os.path.realpath(project_dir))
        if not target.is_relative_to(real_project):
            raise SessionsFolderError(
                f"{visible_path(str(sessions_dir))} is a symlink to {visible_path(str(target))}, outside "
                f"{visible_path(str(real_project))}: transcripts are not kept there (remove the link)"
            )
    try:
        fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except NotADirectoryError:
        raise SessionsFolderError(f"{visible_path(str(sessions_dir))} is not a folder") from None
    except OSError as error:
        raise SessionsFolderError(_cannot("open", sessions_dir, error)) from None
    if create:
        try:
            narrow_levels(project_dir)  # ~/.mini-claude and projects/ an older version left open
            if os.fstat(fd).st_mode & OTHERS_BITS:
                os.fchmod(fd, FOLDER_MODE)
        except OSError as error:
            os.close(fd)
            raise SessionsFolderError(
                f"{visible_path(str(sessions_dir))} is open to other users and cannot be made private: "
                f"{error.strerror}"
            ) from None
    return fd


def open_transcript_for_reading(path: Path, *, dir_fd: int | None = None) -> tuple[int, os.stat_result]:
    """An open descriptor of the regular file at `path` (never through a symlink) and its stat;
    with `dir_fd` (the descriptor of path's folder), the file is opened relative to it."""
    try:
        fd = os.open(path.name if dir_fd is not None else path, READ_FLAGS, dir_fd=dir_fd)
    except OSError as error:
        raise TranscriptError(_unreadable(path, error)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise TranscriptError(f"{visible_path(str(path))} is not a regular file: not read")
    if (foreign := owner_problem(path, info)) is not None:
        os.close(fd)
        raise TranscriptError(f"{foreign}: not read")
    return fd, info


def read_transcript(path: Path) -> bytes:
    """The whole transcript at `path` (a regular file, never through a symlink): at most one byte
    more than MAX_TRANSCRIPT_BYTES, so a caller can tell one that grew past it meanwhile. Raises
    TranscriptError (one line) when it cannot be read or is too large."""
    shown = visible_path(str(path))
    fd, info = open_transcript_for_reading(path)
    try:
        if info.st_size > MAX_TRANSCRIPT_BYTES:
            raise TranscriptError(too_large_problem(shown, info.st_size))
        return read_capped(fd, MAX_TRANSCRIPT_BYTES)
    except OSError as error:
        raise TranscriptError(f"cannot read {shown}: {error.strerror}") from None
    finally:
        os.close(fd)


def create_transcript(sessions_dir: Path, name: str, data: bytes = b"") -> int:
    """A new file `name` in the sessions folder, 0600 (never an existing file, never through a
    symlink), locked before anything is in it, holding `data` (fsynced): its descriptor, left
    open for appending. FileExistsError when the name is taken; a partial file is removed."""
    dir_fd = open_sessions_dir(sessions_dir, create=True)
    assert dir_fd is not None  # create=True makes it or raises
    try:
        fd = os.open(name, NEW_FILE_FLAGS, FILE_MODE, dir_fd=dir_fd)
        try:
            os.fchmod(fd, FILE_MODE)  # the umask may have narrowed it further; never wider
            with contextlib.suppress(OSError):  # a filesystem without locks: saved all the same
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if data:
                write_all(fd, data)
                os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
            os.close(fd)
            raise
        return fd
    finally:
        os.close(dir_fd)


def _unreadable(path: Path, error: OSError) -> str:
    shown = visible_path(str(path))
    if error.errno == errno.ELOOP:
        return f"{shown} is a symlink: transcripts are never read through one"
    if error.errno == errno.ENOENT:
        return f"{shown} does not exist"
    return f"cannot read {shown}: {error.strerror}"


def _cannot(verb: str, path: Path, error: OSError) -> str:
    return f"cannot {verb} the sessions folder {visible_path(str(path))}: {error.strerror}"
