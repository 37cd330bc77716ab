"""Atomic file replacement: readers see the old file or the new one, never a half-written one.

Used by the file tools, the memory store and (without fsync) the recall ranking's cache.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from mini_claude.core.files.private_files import FILE_MODE, create_folders, private_place

NEW_FILE_MODE = 0o666  # narrowed by the umask, as for any newly created file


def write_atomic(path: Path, data: str | bytes, *, encoding: str = "utf-8", mode: int | None = None) -> bool:
    """Replace the file at `path` with `data` (creating parent folders); True when `path` was new.

    The temp file lives in the same folder (so `os.replace` is atomic), is created exclusively
    (never through a planted symlink), fsynced before the rename, and takes an existing regular
    file's permission bits (or exactly `mode`, whatever the umask and an existing file's). The
    path is replaced as given: a symlink there is replaced by a regular file, never written
    through (a caller that means the target passes the resolved path, as the file tools do with
    the path the user approved). Text is written without newline translation. In mini-claude's
    own folders (`private_files.private_place`) a file is 0600 and a folder made for it 0700,
    whatever the umask.
    """
    target = Path(path)
    payload = data.encode(encoding, errors="surrogateescape") if isinstance(data, str) else data
    if mode is None and private_place(target.parent):
        mode = FILE_MODE
    if mode is not None:
        create_folders(target.parent)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
    try:
        existing = os.lstat(target)
    except FileNotFoundError:
        existing = None
    # A symlink's own bits (0777) or a FIFO's are not the file's: only a regular file's are kept.
    keep_mode = existing is not None and stat.S_ISREG(existing.st_mode)
    existing_mode = existing.st_mode & 0o7777 if existing is not None and keep_mode else None
    existing_mode = mode if mode is not None else existing_mode

    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    replace_through_temp(target, temp, payload, create_mode=NEW_FILE_MODE, exact_mode=existing_mode)
    return existing is None


def replace_through_temp(
    target: Path, temp: Path, payload: bytes, *, create_mode: int, exact_mode: int | None = None,
    durable: bool = True,
) -> None:  # fmt: skip
    """Write `payload` into `temp` (a new file, created exclusively and never through a symlink,
    with `create_mode` narrowed by the umask, or set to `exact_mode`), then rename it over
    `target`; on any failure the temp file is removed. `durable` fsyncs the file before the
    rename and the folder after it (a cache can do without)."""
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, create_mode)
    try:
        try:
            if exact_mode is not None:
                os.fchmod(fd, exact_mode)
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if durable:
        _fsync_dir(target.parent)


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable; best effort (some filesystems refuse to open folders)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
