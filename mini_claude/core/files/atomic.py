"""Atomic file replacement: readers see the old file or the new one, never a half-written one.

Used by the file tools, the memory store, (without fsync) the recall ranking's cache, and, in an
open folder (`write_in_folder`), what a session keeps beside its transcript.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from mini_claude.core.files.private_files import FILE_MODE, create_folders, private_place

NEW_FILE_MODE = 0o666  # narrowed by the umask, as for any newly created file
# A temp file is new (never one someone put there first) and never reached through a symlink.
NEW_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# What link(2) says on a filesystem that has no hard links.
NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS}


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
    fd = os.open(temp, NEW_TEMP_FLAGS, create_mode)
    try:
        _write_whole(fd, payload, exact_mode=exact_mode, durable=durable)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if durable:
        _fsync_dir(target.parent)


def write_in_folder(folder: int, name: str, payload: bytes, *, mode: int, replace: bool = True) -> None:
    """`payload` in the file `name` of the open folder `folder` (a descriptor: no path to it is
    walked again, so no folder on the way can be swapped), whole or not at all, exactly `mode`,
    fsynced: a temp file beside it, then renamed over it. `replace=False` keeps an existing file
    (FileExistsError): content written once under its name is never overwritten."""
    temp = f".{name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(temp, NEW_TEMP_FLAGS, mode, dir_fd=folder)
    try:
        _write_whole(fd, payload, exact_mode=mode, durable=True)
        if replace:
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        else:  # a link fails where the name exists
            try:
                os.link(temp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
            except OSError as error:
                if error.errno not in NO_HARD_LINKS:
                    raise
                # A filesystem without hard links (vfat, some network shares): the new name is
                # created exclusively and written in place, still never over or through a file.
                _write_new_in_place(folder, name, payload, mode=mode)
            os.unlink(temp, dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise
    with contextlib.suppress(OSError):
        os.fsync(folder)


def _write_new_in_place(folder: int, name: str, payload: bytes, *, mode: int) -> None:
    """`payload` as the new file `name` (never over one), removed again if it cannot be whole."""
    fd = os.open(name, NEW_TEMP_FLAGS, mode, dir_fd=folder)
    try:
        _write_whole(fd, payload, exact_mode=mode, durable=True)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=folder)
        raise


def _write_whole(fd: int, payload: bytes, *, exact_mode: int | None, durable: bool) -> None:
    """Write all of `payload` to the new file `fd` (given `exact_mode` first), then close it."""
    try:
        if exact_mode is not None:
            os.fchmod(fd, exact_mode)
        write_all(fd, payload)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, payload: bytes) -> None:
    """All of `payload` to `fd` (a regular file takes it in one call unless the disk fills up)."""
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]


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
