"""Copying a transcript under a new session id: how a session that another mini-claude has open
is resumed without the two of them writing into one file."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from mini_claude.paths import visible_path
from mini_claude.sessions.folder import (
    FILE_MODE,
    SessionsFolderError,
    TranscriptError,
    open_sessions_dir,
    read_transcript,
)
from mini_claude.sessions.records import (
    HEADER_TYPE,
    TRANSCRIPT_SUFFIX,
    encode_line,
    new_session_id,
)

COPY_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def copy_transcript(source: Path) -> Path:
    """A new transcript beside `source` holding its complete lines (the other mini-claude may be
    in the middle of writing one), its header naming the new id and the session it was copied
    from. Raises TranscriptError (one line) when it cannot be read or written."""
    shown = visible_path(str(source))
    data = read_transcript(source)
    data = data[: data.rfind(b"\n") + 1]
    header_line, _, records = data.partition(b"\n")
    try:
        header = json.loads(header_line)
    except (ValueError, RecursionError):  # a hostile line nested 100,000 deep
        header = None
    if not isinstance(header, dict) or header.get("type") != HEADER_TYPE:
        raise TranscriptError(f"{shown}: line 1 is not a mini-claude session header: not a transcript")
    session_id = new_session_id()
    header.update(id=session_id, copied_from=source.stem)  # "type" stays the first key
    target = source.parent / f"{session_id}{TRANSCRIPT_SUFFIX}"
    try:
        _write_new(target, encode_line(header) + records)
    except SessionsFolderError as error:
        raise TranscriptError(str(error)) from None
    except OSError as error:
        raise TranscriptError(f"cannot copy {shown} to a new session: {error.strerror}") from None
    return target


def _write_new(target: Path, data: bytes) -> None:
    """`data` in a new 0600 file at `target` (never an existing file, never through a symlink);
    a partial copy is removed."""
    dir_fd = open_sessions_dir(target.parent, create=True)
    assert dir_fd is not None  # create=True makes it or raises
    try:
        fd = os.open(target.name, COPY_FLAGS, FILE_MODE, dir_fd=dir_fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(target.name, dir_fd=dir_fd)
            raise
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)
