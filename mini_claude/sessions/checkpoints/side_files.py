"""What a session keeps beside its transcript, in `<session-id>.files/` in the sessions folder: the
name `/rename` gave it, and the content files had before a file tool changed them (checkpoints,
one file per distinct content, named by its SHA-256). Private as transcripts are: the folder is
0700, each file 0600 and written whole (`core/files`: atomic and private), nothing is opened
through a symlink, and a file that is not a regular one of ours is not read. Retention removes
the folder with its transcript."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mini_claude.core.files.atomic import write_in_folder
from mini_claude.core.files.private_files import FILE_MODE, FOLDER_MODE, narrow
from mini_claude.core.files.safe_read import owner_problem, read_capped
from mini_claude.sessions.transcript.sessions_folder import READ_FLAGS, SessionsFolderError, open_sessions_dir

SIDE_SUFFIX = ".files"
NAME_FILE = "name"
BLOB_PATTERN = re.compile(r"[0-9a-f]{64}")
MAX_NAME_CHARS = 80
MAX_COPY_BYTES = 1 << 31  # more than any content a checkpoint keeps
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class SideFileError(Exception):
    """A file beside a transcript cannot be read or kept; the message says why in one line."""


def is_side_folder_name(name: str) -> bool:
    stem = name.removesuffix(SIDE_SUFFIX)
    return stem != name and re.fullmatch(r"[0-9a-f]{32}", stem) is not None


def write_name(sessions_dir: Path, session_id: str, name: str) -> None:
    """Name the session (replacing an earlier name); raises SideFileError."""
    with _side_folder(sessions_dir, session_id, create=True) as folder:
        assert folder is not None
        _write_new(folder, NAME_FILE, name.encode("utf-8", "surrogateescape"), replace=True)


def read_name(sessions_dir: Path, session_id: str) -> str:
    """The session's name, or "" (none given, or it cannot be read: a name is not worth an error)."""
    try:
        with _side_folder(sessions_dir, session_id, create=False) as side:
            if side is None:
                return ""
            data = _read(side, NAME_FILE, limit=MAX_NAME_CHARS * 4)
    except (OSError, SideFileError, SessionsFolderError):
        return ""
    return data.decode("utf-8", "replace").strip()[:MAX_NAME_CHARS]


def keep_content(sessions_dir: Path, session_id: str, data: bytes) -> str:
    """Keep `data` (once, however often it is kept) and return the digest that names it; raises
    SideFileError."""
    digest = hashlib.sha256(data).hexdigest()
    with _side_folder(sessions_dir, session_id, create=True) as folder:
        assert folder is not None
        with contextlib.suppress(FileExistsError):
            _write_new(folder, digest, data, replace=False)
    return digest


def read_content(sessions_dir: Path, session_id: str, digest: str, *, limit: int) -> bytes:
    """Content kept under `digest`, checked against it; raises SideFileError."""
    if BLOB_PATTERN.fullmatch(digest) is None:
        raise SideFileError(f"{digest[:20]!r} does not name kept content")
    with _side_folder(sessions_dir, session_id, create=False) as folder:
        if folder is None:
            raise SideFileError("nothing is kept for this session any more")
        data = _read(folder, digest, limit=limit)
    if hashlib.sha256(data).hexdigest() != digest:
        raise SideFileError("the kept content was changed since it was kept")
    return data


def copy_side_files(source_dir: Path, source_id: str, target_dir: Path, target_id: str) -> None:
    """A copied session (a fork, a copy of a session in use) keeps the content its checkpoints
    name: linked where the file system allows, else copied. Best effort: raises SideFileError."""
    with _side_folder(source_dir, source_id, create=False) as source:
        if source is None:
            return
        with _side_folder(target_dir, target_id, create=True) as target:
            assert target is not None
            for entry in os.listdir(source):
                if BLOB_PATTERN.fullmatch(entry) is None:
                    continue
                try:
                    os.link(entry, entry, src_dir_fd=source, dst_dir_fd=target, follow_symlinks=False)
                except FileExistsError:
                    continue
                except OSError:  # no hard links here: a copy
                    with contextlib.suppress(FileExistsError):
                        _write_new(target, entry, _read(source, entry, limit=MAX_COPY_BYTES), replace=False)


def remove_side_files(sessions_fd: int, session_id: str) -> None:
    """Remove a session's side folder and what it holds (regular files only; nothing followed)."""
    name = session_id + SIDE_SUFFIX
    try:
        folder = os.open(name, FOLDER_FLAGS, dir_fd=sessions_fd)
    except FileNotFoundError:
        return
    try:
        for entry in os.listdir(folder):
            info = os.stat(entry, dir_fd=folder, follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode):
                os.unlink(entry, dir_fd=folder)
    finally:
        os.close(folder)
    os.rmdir(name, dir_fd=sessions_fd)


@contextmanager
def _side_folder(sessions_dir: Path, session_id: str, *, create: bool) -> Iterator[int | None]:
    """The session's side folder, open (None: there is none and `create` is False)."""
    sessions = open_sessions_dir(sessions_dir, create=create)
    if sessions is None:
        yield None
        return
    try:
        name = session_id + SIDE_SUFFIX
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, FOLDER_MODE, dir_fd=sessions)
        try:
            folder = os.open(name, FOLDER_FLAGS, dir_fd=sessions)
        except FileNotFoundError:
            if create:
                raise
            yield None
            return
        except OSError as error:
            raise SideFileError(f"cannot open {name}: {error.strerror}") from None
        try:
            info = os.fstat(folder)
            if (problem := owner_problem(sessions_dir / name, info)) is not None:
                raise SideFileError(problem)
            narrow(folder, FOLDER_MODE, sessions_dir / name)
            yield folder
        finally:
            os.close(folder)
    finally:
        os.close(sessions)


def _write_new(folder: int, name: str, data: bytes, *, replace: bool) -> None:
    """`data` in `name` in the open `folder`, whole or not at all, 0600; raises SideFileError, or
    FileExistsError when `replace` is False and the name is taken."""
    try:
        write_in_folder(folder, name, data, mode=FILE_MODE, replace=replace)
    except FileExistsError:
        raise
    except OSError as error:
        raise SideFileError(f"cannot write beside the transcript: {error.strerror}") from None


def _read(folder: int, name: str, *, limit: int) -> bytes:
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=folder)
    except OSError as error:
        raise SideFileError(f"{name} cannot be read: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise SideFileError(f"{name} is not a file of ours")
        data = read_capped(fd, limit)
        if len(data) > limit:
            raise SideFileError(f"{name} is larger than expected")
        return data
    finally:
        os.close(fd)
