"""`.trash/` in the memory folder: one folder per change set (a tidy, a `/memory rm`, a save over a
memory) holding the files as they were before it (`before/`), what an undo took out (`after/`) and
its manifest (`changes.json`). The folder's name says its state: `<id>.applying` while the set is
applied (the journal a crash leaves for the next start), `<id>` once applied, `<id>.undone`.

Private (0700) and reached only through descriptors opened without following symlinks: a `.trash`
or anything in it swapped for a symlink is refused, never followed. Sets older than KEEP_DAYS go,
and beyond KEEP_SETS the oldest; one still applying stays (the next start needs it).
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
from dataclasses import asdict, dataclass
from pathlib import Path

from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import write_in_folder
from mini_claude.core.paths import visible_path
from mini_claude.memory.store.naming import is_memory_file_name

SCOPES = ("", "project", "team", "user")  # an entry's: "" is the folder holding the set

TRASH_DIR = ".trash"
MANIFEST = "changes.json"
BEFORE, AFTER = "before", "after"
APPLYING, APPLIED, UNDONE = ".applying", "", ".undone"  # a set's state: its folder name's suffix
DIR_MODE, FILE_MODE = 0o700, 0o600
KEEP_DAYS, KEEP_SETS = 30, 50
COPY_MAX_BYTES = 4 * 2**20  # a memory kept or put back; a larger one is refused, never cut
FORMAT = 2  # 1 was tidy's own `tidy.json`, not read any more
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SET_NAME = re.compile(r"(\d{8}T\d{12}Z-[0-9a-f]{6})(\.applying|\.undone)?")
_DIGEST = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Entry:
    """One file of a set: its sha256 before (None: the set created it) and after (None: deleted),
    and its modification time before, which an undo puts back."""

    file: str
    before: str | None
    after: str | None
    mtime_ns: int | None = None
    scope: str = ""  # the file is in another scope's folder (changes.py); "" the set's own

    def part(self, part: str) -> str:
        """Where its copies go in the set's folder: `before/`, or `before.user/` for another scope's."""
        return f"{part}.{self.scope}" if self.scope else part


@dataclass(frozen=True)
class Manifest:
    label: str  # for people: "the tidy", "the deletion of user_role.md"
    at: float
    entries: list[Entry]

    def described(self) -> str:
        """`the tidy (2026-03-01 14:02, 3 changes)`."""
        when = dt.datetime.fromtimestamp(self.at).strftime("%Y-%m-%d %H:%M")
        count = len(self.entries)
        return f"{self.label} ({when}, {count} change{'' if count == 1 else 's'})"


class ChangeSetFolder:
    """One set's folder, used through its descriptor; `close()` (or `with`) when done."""

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
        """`data` as `part/file_name`, a new file (never over one, never through a symlink)."""
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, DIR_MODE, dir_fd=self.fd)
        part_fd = os.open(part, _DIR_FLAGS, dir_fd=self.fd)
        try:
            write_in_folder(part_fd, file_name, data, mode=FILE_MODE, replace=False)
        finally:
            os.close(part_fd)

    def read(self, part: str, file_name: str) -> bytes:
        """A regular file of the set, never through a symlink, at most COPY_MAX_BYTES."""
        part_fd = os.open(part or ".", _DIR_FLAGS, dir_fd=self.fd)
        try:
            fd = os.open(file_name, safe_read.OPEN_FLAGS, dir_fd=part_fd)
        finally:
            os.close(part_fd)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", self.shown(part, file_name))
            # What someone else put in the trash must never be put back as a memory.
            if (foreign := safe_read.owner_problem(self.path / part / file_name, info)) is not None:
                raise safe_read.UnreadableFile(f"{foreign}: not used")
            data = safe_read.read_capped(fd, COPY_MAX_BYTES)
        finally:
            os.close(fd)
        if len(data) > COPY_MAX_BYTES:
            raise OSError(errno.EFBIG, "too large", self.shown(part, file_name))
        return data

    def write_manifest(self, manifest: Manifest) -> None:
        """Written whole before a rename puts it in place: a manifest there is never torn."""
        data = json.dumps({"format": FORMAT, **asdict(manifest)}, indent=1).encode()
        write_in_folder(self.fd, MANIFEST, data, mode=FILE_MODE)

    def read_manifest(self) -> Manifest:
        """FileNotFoundError when there is none (the set changed nothing: it is written before
        the first change); ValueError (one line) when it is not usable."""
        data = self.read("", MANIFEST)
        try:
            value = json.loads(data)  # NaN or Infinity fits no field: each is checked below
            form, label, at = value["format"], value["label"], value["at"]
            entries = [_entry(**item) for item in value["entries"]]
        except (ValueError, RecursionError, TypeError, KeyError) as error:
            raise ValueError(f"{self.shown('', MANIFEST)} is not usable ({error})") from None
        if form != FORMAT or not isinstance(label, str) or not entries or not _is_time(at):
            raise ValueError(f"{self.shown('', MANIFEST)} is not usable (not a manifest of format {FORMAT})")
        return Manifest(label[:200], float(at), entries)

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            shutil.rmtree(self.id + self.state, dir_fd=self.trash_fd)  # never follows symlinks


def new_change_set(memory_dir: Path, now: float) -> ChangeSetFolder:
    """A fresh `<id>.applying` folder (old sets removed first); MemoryStoreError (one line) when
    the trash cannot be used."""
    trash_fd = _open_trash(memory_dir, create=True)
    try:
        _prune(trash_fd, now)
        stamp = dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        name = f"{stamp}-{secrets.token_hex(3)}{APPLYING}"
        os.mkdir(name, DIR_MODE, dir_fd=trash_fd)
        return ChangeSetFolder(memory_dir, name, os.open(name, _DIR_FLAGS, dir_fd=trash_fd), trash_fd)
    except OSError as error:
        os.close(trash_fd)
        raise MemoryStoreError(f"the trash cannot be used: {safe_read.describe(error)}") from error


def change_sets(memory_dir: Path, *, applying: bool = False) -> list[ChangeSetFolder]:
    """Every set's folder (or only those still applying), newest first (the caller closes them);
    [] without a trash."""
    try:
        trash_fd = _open_trash(memory_dir, create=False)
    except FileNotFoundError:
        return []
    folders = []
    try:
        for name in sorted(_set_names(trash_fd), reverse=True):
            if applying and not name.endswith(APPLYING):
                continue
            with contextlib.suppress(OSError):  # a symlink or a file with a set's name: not ours
                fd = os.open(name, _DIR_FLAGS, dir_fd=trash_fd)
                folders.append(ChangeSetFolder(memory_dir, name, fd, os.dup(trash_fd)))
    finally:
        os.close(trash_fd)
    return folders


def _open_trash(memory_dir: Path, *, create: bool) -> int:
    """`.trash` (made 0700); FileNotFoundError when there is none and not `create`, else
    MemoryStoreError when it cannot be used."""
    shown = visible_path(str(memory_dir / TRASH_DIR))
    root_fd = os.open(memory_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(TRASH_DIR, DIR_MODE, dir_fd=root_fd)
        mode = os.lstat(TRASH_DIR, dir_fd=root_fd).st_mode
        if not stat.S_ISDIR(mode):
            kind = safe_read.kind(mode)
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
    names = sorted((n for n in _set_names(trash_fd) if not n.endswith(APPLYING)), reverse=True)
    for position, name in enumerate(names):
        with contextlib.suppress(OSError):
            info = os.lstat(name, dir_fd=trash_fd)
            if stat.S_ISDIR(info.st_mode) and (
                position >= KEEP_SETS - 1 or info.st_mtime < now - KEEP_DAYS * 86_400
            ):
                shutil.rmtree(name, dir_fd=trash_fd)


def _entry(file: object, before: object, after: object, mtime_ns: object, scope: object = "") -> Entry:
    """One manifest entry, read as untrusted: a name that is no memory file, or a scope that is
    none, refuses the manifest."""
    if not isinstance(file, str) or "/" in file or "\0" in file or not is_memory_file_name(file):
        raise ValueError(f"{visible_path(str(file))[:80]} names no memory file")
    if mtime_ns is not None and (type(mtime_ns) is not int or mtime_ns < 0):
        raise ValueError(f"{visible_path(file)} has no valid modification time")
    if scope not in SCOPES:
        raise ValueError(f"{visible_path(file)} names no scope of memories")
    return Entry(file, _digest(before), _digest(after), mtime_ns, str(scope))


def _digest(value: object) -> str | None:
    if value is None or (isinstance(value, str) and _DIGEST.fullmatch(value)):
        return value
    raise ValueError("a digest is not valid")


def _is_time(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < float("inf")
