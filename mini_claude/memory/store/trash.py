"""`.trash/` in the memory folder: one folder per change set (a tidy, a `/memory rm`, an update of a
memory), holding the files as they were before it (`before/`), what an undo took back out
(`after/`) and its manifest (`changes.json`). The folder's name says its state: `<id>.applying`
while it is applied (the journal a crash leaves for the next start), `<id>` once applied,
`<id>.undone` after an undo; a rename moves it from one to the next.

Private (0700) and reached only through descriptors opened without following symlinks: a `.trash`
or anything in it swapped for a symlink is refused, never followed. Sets older than KEEP_DAYS go,
and at most KEEP_SETS are kept; one still applying is never removed (the next start needs it).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import math
import os
import re
import secrets
import shutil
import stat
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mini_claude.core import safe_read
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.paths import visible_path
from mini_claude.memory.store.naming import is_memory_file_name

TRASH_DIR = ".trash"
MANIFEST = "changes.json"
BEFORE = "before"  # the files as they were before the change set
AFTER = "after"  # what the change set had written, moved here by an undo
APPLYING, APPLIED, UNDONE = ".applying", "", ".undone"  # the state, as the folder name's suffix
DIR_MODE, FILE_MODE = 0o700, 0o600
KEEP_DAYS = 30
KEEP_SETS = 50
COPY_MAX_BYTES = 4 * 2**20  # a memory kept or put back (one larger is refused, never cut)
MANIFEST_MAX_BYTES = 4 * 2**20
MANIFEST_FORMAT = 2  # 1 was tidy's own record (tidy.json), which this does not read
LABEL_MAX_CHARS = 200
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SET_NAME = re.compile(r"(\d{8}T\d{12}Z-[0-9a-f]{6})(\.applying|\.undone)?")
_DIGEST = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Entry:
    """One file of a change set: its sha256 before (None: the set created it) and after (None:
    the set deleted it), and its modification time before, which an undo puts back."""

    file: str
    before: str | None
    after: str | None
    mtime_ns: int | None = None


@dataclass(frozen=True)
class Manifest:
    label: str  # what the change set was, for people: "the tidy", "the deletion of user_role.md"
    at: float  # when it was applied (seconds since the epoch)
    entries: list[Entry]

    def described(self) -> str:
        """`the tidy (2026-03-01 14:02, 3 changes)`."""
        when = dt.datetime.fromtimestamp(self.at).strftime("%Y-%m-%d %H:%M")
        count = len(self.entries)
        return f"{self.label} ({when}, {count} change{'' if count == 1 else 's'})"


class ChangeSetFolder:
    """One change set's folder, used through its descriptor; `close()` (or `with`) when done."""

    def __init__(self, memory_dir: Path, name: str, fd: int, trash_fd: int) -> None:
        self.memory_dir, self.fd, self.trash_fd = memory_dir, fd, trash_fd
        match = _SET_NAME.fullmatch(name)
        assert match is not None
        self.id, self.state = match[1], match[2] or APPLIED

    @property
    def path(self) -> Path:
        return self.memory_dir / TRASH_DIR / (self.id + self.state)

    def shown(self, part: str = "", file_name: str = "") -> str:
        return visible_path(str(Path(TRASH_DIR, self.id + self.state, part, file_name)))

    def close(self) -> None:
        for fd in (self.fd, self.trash_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> ChangeSetFolder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def set_state(self, state: str) -> None:
        os.rename(self.id + self.state, self.id + state, src_dir_fd=self.trash_fd, dst_dir_fd=self.trash_fd)
        self.state = state
        os.fsync(self.trash_fd)

    def keep(self, part: str, file_name: str, data: bytes) -> None:
        """Write `data` as `part/file_name`, a new file (never over one, never through a symlink)."""
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, DIR_MODE, dir_fd=self.fd)
        part_fd = os.open(part, _DIR_FLAGS, dir_fd=self.fd)
        try:
            _write_new(file_name, data, part_fd)
            os.fsync(part_fd)
        finally:
            os.close(part_fd)

    def read(self, part: str, file_name: str, max_bytes: int = COPY_MAX_BYTES) -> bytes:
        """A regular file of the set (never through a symlink); OSError when it is not one or is
        larger than `max_bytes`."""
        part_fd = os.open(part, _DIR_FLAGS, dir_fd=self.fd) if part else os.dup(self.fd)
        try:
            fd = os.open(file_name, safe_read.OPEN_FLAGS, dir_fd=part_fd)
        finally:
            os.close(part_fd)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", self.shown(part, file_name))
            data = os.read(fd, max_bytes + 1)
        finally:
            os.close(fd)
        if len(data) > max_bytes:
            raise OSError(errno.EFBIG, "too large", self.shown(part, file_name))
        return data

    def write_manifest(self, manifest: Manifest) -> None:
        value = {"format": MANIFEST_FORMAT, **asdict(manifest)}
        temp = f".{MANIFEST}.{secrets.token_hex(4)}.tmp"
        _write_new(temp, (json.dumps(value, ensure_ascii=False, indent=1) + "\n").encode(), self.fd)
        os.rename(temp, MANIFEST, src_dir_fd=self.fd, dst_dir_fd=self.fd)  # it is there whole, or not
        os.fsync(self.fd)

    def read_manifest(self) -> Manifest:
        """The manifest; FileNotFoundError when there is none (the set changed nothing: it is
        written before the first change), ValueError (one line) when it is not usable."""
        data = self.read("", MANIFEST, MANIFEST_MAX_BYTES)
        try:
            return _parse_manifest(json.loads(data.decode("utf-8"), parse_constant=_refuse_constant))
        except (ValueError, RecursionError, TypeError, KeyError) as error:
            raise ValueError(f"{self.shown('', MANIFEST)} is not usable ({error})") from None

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            shutil.rmtree(self.id + self.state, dir_fd=self.trash_fd)  # never follows symlinks


def new_change_set(memory_dir: Path, now: float) -> ChangeSetFolder:
    """A fresh `<id>.applying` folder; old sets are removed first. MemoryStoreError (one line)
    when the trash cannot be used."""
    trash_fd = _open_trash(memory_dir, create=True)
    try:
        _prune(trash_fd, now)
        stamp = dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        name = f"{stamp}-{secrets.token_hex(3)}{APPLYING}"
        os.mkdir(name, DIR_MODE, dir_fd=trash_fd)
        fd = os.open(name, _DIR_FLAGS, dir_fd=trash_fd)
    except OSError as error:
        os.close(trash_fd)
        raise MemoryStoreError(f"the trash cannot be used: {safe_read.describe(error)}") from error
    return ChangeSetFolder(memory_dir, name, fd, trash_fd)


def change_sets(memory_dir: Path) -> list[ChangeSetFolder]:
    """Every change set's folder, newest first (the caller closes them); [] without a trash.
    MemoryStoreError when there is one that cannot be used."""
    try:
        trash_fd = _open_trash(memory_dir, create=False)
    except FileNotFoundError:
        return []
    folders = []
    try:
        for name in sorted(_set_names(trash_fd), reverse=True):
            with contextlib.suppress(OSError):  # a symlink or a file with a set's name: not ours
                fd = os.open(name, _DIR_FLAGS, dir_fd=trash_fd)
                folders.append(ChangeSetFolder(memory_dir, name, fd, os.dup(trash_fd)))
    finally:
        os.close(trash_fd)
    return folders


def _open_trash(memory_dir: Path, *, create: bool) -> int:
    """A descriptor of `.trash` (made 0700); FileNotFoundError when there is none and `create` is
    False; MemoryStoreError when it cannot be used."""
    shown = visible_path(str(memory_dir / TRASH_DIR))
    root_fd = os.open(memory_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(TRASH_DIR, DIR_MODE, dir_fd=root_fd)
        info = os.lstat(TRASH_DIR, dir_fd=root_fd)
        if not stat.S_ISDIR(info.st_mode):
            kind = safe_read.kind(info.st_mode)
            raise MemoryStoreError(f"{shown} is {kind}, not the folder old memories are kept in: remove it")
        trash_fd = os.open(TRASH_DIR, _DIR_FLAGS, dir_fd=root_fd)
        if os.fstat(trash_fd).st_mode & 0o077:
            os.fchmod(trash_fd, DIR_MODE)
        return trash_fd
    except OSError as error:
        if isinstance(error, FileNotFoundError) and not create:
            raise
        raise MemoryStoreError(f"{shown} cannot be used: {safe_read.describe(error)}") from error
    finally:
        os.close(root_fd)


def _set_names(trash_fd: int) -> list[str]:
    with os.scandir(trash_fd) as entries:
        return [entry.name for entry in entries if _SET_NAME.fullmatch(entry.name)]


def _prune(trash_fd: int, now: float) -> None:
    names = [name for name in sorted(_set_names(trash_fd), reverse=True) if not name.endswith(APPLYING)]
    for position, name in enumerate(names):
        try:
            info = os.lstat(name, dir_fd=trash_fd)
        except OSError:
            continue
        too_old = info.st_mtime < now - KEEP_DAYS * 86_400
        if (too_old or position >= KEEP_SETS - 1) and stat.S_ISDIR(info.st_mode):
            with contextlib.suppress(OSError):
                shutil.rmtree(name, dir_fd=trash_fd)


def _parse_manifest(value: Any) -> Manifest:
    if not isinstance(value, dict) or value.get("format") != MANIFEST_FORMAT:
        raise ValueError(f"not a manifest of format {MANIFEST_FORMAT}")
    label, at, entries = value["label"], value["at"], value["entries"]
    if not isinstance(label, str) or not 0 < len(label) <= LABEL_MAX_CHARS:
        raise ValueError("no valid label")
    if not isinstance(at, int | float) or isinstance(at, bool) or not math.isfinite(at) or at < 0:
        raise ValueError("no valid time")
    if not isinstance(entries, list) or not entries:
        raise ValueError("no list of files")
    return Manifest(label, float(at), [_entry(item, number) for number, item in enumerate(entries, 1)])


def _entry(item: Any, number: int) -> Entry:
    file, before, after, mtime_ns = item["file"], item["before"], item["after"], item["mtime_ns"]
    if not isinstance(file, str) or not is_memory_file_name(file) or "/" in file or "\0" in file:
        raise ValueError(f"file {number} names no memory file")
    if not all(d is None or (isinstance(d, str) and _DIGEST.fullmatch(d)) for d in (before, after)):
        raise ValueError(f"file {number} has no valid digest")
    if mtime_ns is not None and (type(mtime_ns) is not int or mtime_ns < 0):
        raise ValueError(f"file {number} has no valid modification time")
    return Entry(file, before, after, mtime_ns)


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
