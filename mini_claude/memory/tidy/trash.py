"""`.trash/` in the memory folder: one folder per tidy, holding the files as they were before it
(`before/`), what an undo took back out (`after/`), and the tidy's record (`tidy.json`), so
`/memory undo` can restore the last tidy.

Private (0700, narrowed when wider) and reached only through descriptors opened with O_NOFOLLOW:
a `.trash` or a file in it swapped for a symlink is refused, never followed. Tidies older than
TRASH_KEEP_DAYS are removed, and at most TRASH_KEEP_TIDIES are kept.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mini_claude.core import safe_read
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.paths import visible_path

TRASH_DIR = ".trash"
RECORD_FILE = "tidy.json"
BEFORE = "before"  # the files as they were before the tidy
AFTER = "after"  # what the tidy had written, moved here by an undo
DIR_MODE = 0o700
FILE_MODE = 0o600
TRASH_KEEP_DAYS = 30
TRASH_KEEP_TIDIES = 20
RECORD_MAX_BYTES = 4 * 2**20
COPY_MAX_BYTES = 4 * 2**20  # a file kept or brought back by copying (tidy's own are far smaller)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TIDY_FOLDER = re.compile(r"\d{8}T\d{6}\d{6}Z-[0-9a-f]{6}")


class TidyFolder:
    """One tidy's folder, used through its descriptor; `close()` (or `with`) when done."""

    def __init__(self, memory_dir: Path, name: str, fd: int, root_fd: int) -> None:
        self.memory_dir, self.name, self.fd, self.root_fd = memory_dir, name, fd, root_fd

    @property
    def path(self) -> Path:
        return self.memory_dir / TRASH_DIR / self.name

    def shown(self, part: str, file_name: str) -> str:
        return visible_path(str(Path(TRASH_DIR, self.name, part, file_name)))

    def close(self) -> None:
        for fd in (self.fd, self.root_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> TidyFolder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- what the tidy keeps ------------------------------------------------------------------

    def keep_copy(self, part: str, file_name: str, data: bytes) -> None:
        """Write `data` as `part/file_name` (a new file: an existing one is never overwritten)."""
        with self._part(part) as part_fd:
            _write_new(file_name, data, part_fd)

    def move_in(self, part: str, file_name: str) -> None:
        """Move the memory folder's `file_name` (itself, a symlink not followed) to `part/`."""
        with self._part(part) as part_fd:
            if _exists(file_name, part_fd):
                raise OSError(errno.EEXIST, "already in the trash", self.shown(part, file_name))
            os.rename(file_name, file_name, src_dir_fd=self.root_fd, dst_dir_fd=part_fd)

    def move_out(self, part: str, file_name: str) -> None:
        """Move `part/file_name` back into the memory folder, where nothing of that name may be."""
        with self._part(part) as part_fd:
            if _exists(file_name, self.root_fd):
                raise OSError(errno.EEXIST, "exists in the memory folder", file_name)
            os.rename(file_name, file_name, src_dir_fd=part_fd, dst_dir_fd=self.root_fd)

    def has(self, part: str, file_name: str) -> bool:
        try:
            with self._part(part, create=False) as part_fd:
                return _exists(file_name, part_fd)
        except OSError:
            return False

    def read(self, part: str, file_name: str) -> bytes:
        """A regular file of `part/` (never through a symlink), at most COPY_MAX_BYTES."""
        with self._part(part, create=False) as part_fd:
            fd = os.open(file_name, safe_read.OPEN_FLAGS, dir_fd=part_fd)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise OSError(errno.EINVAL, "not a regular file", self.shown(part, file_name))
                data = os.read(fd, COPY_MAX_BYTES + 1)
            finally:
                os.close(fd)
        if len(data) > COPY_MAX_BYTES:
            raise OSError(errno.EFBIG, "too large to restore", self.shown(part, file_name))
        return data

    # -- the record ---------------------------------------------------------------------------

    def write_record(self, record: dict[str, Any]) -> None:
        """Replace `tidy.json` atomically (a temp file in the folder, then a rename)."""
        temp = f".{RECORD_FILE}.{secrets.token_hex(4)}.tmp"
        data = (json.dumps(record, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
        try:
            _write_new(temp, data, self.fd)
            os.replace(temp, RECORD_FILE, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=self.fd)
            raise

    def read_record(self) -> Any:
        """The record's JSON value (shape unchecked: see memory/tidy/record.py); OSError or ValueError."""
        fd = os.open(RECORD_FILE, safe_read.OPEN_FLAGS, dir_fd=self.fd)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", RECORD_FILE)
            data = os.read(fd, RECORD_MAX_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) > RECORD_MAX_BYTES:
            raise ValueError(f"{RECORD_FILE} is over {safe_read.format_size(RECORD_MAX_BYTES)}")
        return json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)

    @contextlib.contextmanager
    def _part(self, part: str, *, create: bool = True) -> Iterator[int]:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, DIR_MODE, dir_fd=self.fd)
        fd = os.open(part, _DIR_FLAGS, dir_fd=self.fd)
        try:
            yield fd
        finally:
            os.close(fd)


def new_tidy_folder(memory_dir: Path, now: float) -> TidyFolder:
    """A fresh folder for a tidy about to be applied; old tidies are removed first.
    MemoryStoreError (one line) when the trash cannot be used."""
    root_fd, trash_fd = _open_trash(memory_dir, create=True)
    try:
        _prune(trash_fd, now)
        moment = dt.datetime.fromtimestamp(now, dt.UTC)
        name = moment.strftime("%Y%m%dT%H%M%S%fZ") + "-" + secrets.token_hex(3)
        os.mkdir(name, DIR_MODE, dir_fd=trash_fd)
        fd = os.open(name, _DIR_FLAGS, dir_fd=trash_fd)
    except OSError as error:
        os.close(root_fd)
        raise MemoryStoreError(f"the trash folder cannot be used: {safe_read.describe(error)}") from error
    finally:
        os.close(trash_fd)
    return TidyFolder(memory_dir, name, fd, root_fd)


def tidy_folders(memory_dir: Path) -> list[TidyFolder]:
    """Every tidy's folder, newest first (the caller closes them); [] when there is no trash.
    MemoryStoreError when there is one that cannot be used."""
    try:
        opened = _open_trash(memory_dir, create=False)
    except FileNotFoundError:
        return []
    root_fd, trash_fd = opened
    folders = []
    try:
        for name in sorted(_tidy_names(trash_fd), reverse=True):
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=trash_fd)
            except OSError:
                continue  # a symlink or a file with a tidy's name: not ours
            folders.append(TidyFolder(memory_dir, name, fd, os.dup(root_fd)))
    finally:
        os.close(trash_fd)
        os.close(root_fd)
    return folders


def _open_trash(memory_dir: Path, *, create: bool) -> tuple[int, int]:
    """Descriptors of the memory folder and its `.trash` (0700); FileNotFoundError when there is no
    trash and `create` is False; MemoryStoreError when it cannot be used."""
    shown = visible_path(str(memory_dir / TRASH_DIR))
    root_fd = os.open(memory_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(TRASH_DIR, DIR_MODE, dir_fd=root_fd)
        info = os.lstat(TRASH_DIR, dir_fd=root_fd)
        if not stat.S_ISDIR(info.st_mode):
            kind = safe_read.kind(info.st_mode)
            raise MemoryStoreError(f"{shown} is {kind}, not the folder tidy keeps old versions in: remove it")
        trash_fd = os.open(TRASH_DIR, _DIR_FLAGS, dir_fd=root_fd)
        if os.fstat(trash_fd).st_mode & 0o077:
            os.fchmod(trash_fd, DIR_MODE)
    except FileNotFoundError:
        os.close(root_fd)
        raise
    except OSError as error:
        os.close(root_fd)
        raise MemoryStoreError(f"{shown} cannot be used: {safe_read.describe(error)}") from error
    except BaseException:
        os.close(root_fd)
        raise
    return root_fd, trash_fd


def _tidy_names(trash_fd: int) -> list[str]:
    with os.scandir(trash_fd) as entries:
        return [entry.name for entry in entries if _TIDY_FOLDER.fullmatch(entry.name)]


def _prune(trash_fd: int, now: float) -> None:
    names = sorted(_tidy_names(trash_fd), reverse=True)
    for position, name in enumerate(names):
        try:
            info = os.lstat(name, dir_fd=trash_fd)
        except OSError:
            continue
        too_old = info.st_mtime < now - TRASH_KEEP_DAYS * 86_400
        if (too_old or position >= TRASH_KEEP_TIDIES - 1) and stat.S_ISDIR(info.st_mode):
            with contextlib.suppress(OSError):
                shutil.rmtree(name, dir_fd=trash_fd)  # never follows symlinks (avoids_symlink_attacks)


def _exists(name: str, dir_fd: int) -> bool:
    try:
        os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    return True


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _write_new(name: str, data: bytes, dir_fd: int) -> None:
    """Create `name` in the folder `dir_fd` (never an existing file, never through a symlink),
    write all of `data` and flush it to disk."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(name, flags, FILE_MODE, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
