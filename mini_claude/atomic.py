"""Atomic file replacement: readers see the old file or the new one, never a half-written one.

Used by the file tools and the memory store.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

NEW_FILE_MODE = 0o666  # narrowed by the umask, as for any newly created file


def write_atomic(path: Path, data: str | bytes, *, encoding: str = "utf-8") -> bool:
    """Replace `path` with `data` (creating parent folders); returns True when the file is new.

    The temp file lives in the same folder (so `os.replace` is atomic), is fsynced before the
    rename, and takes the existing file's permission bits. A symlink is written through to its
    target rather than being replaced by a regular file. Text is written without newline
    translation.
    """
    target = Path(os.path.realpath(path))
    payload = data.encode(encoding, errors="surrogateescape") if isinstance(data, str) else data
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        existing_mode: int | None = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        existing_mode = None

    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, NEW_FILE_MODE)
    try:
        try:
            if existing_mode is not None:
                os.fchmod(fd, existing_mode)
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_dir(target.parent)
    return existing_mode is None


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
