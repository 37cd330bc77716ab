"""Reading a user's file that may be hostile: only a regular file that resolves inside the folder
it belongs to, opened without blocking, and never more of it than a cap.

A cloned repository controls its CLAUDE.md: a symlink to ~/.ssh/id_ed25519 must not reach the
model, a FIFO must not hang start-up, a symlink to /dev/zero must not fill memory. Whatever is
refused raises `UnreadableFile`, whose message says why in one line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple, TypedDict, Unpack

from mini_claude.core.files.text_decoding import decode_text
from mini_claude.core.paths import is_within, visible_path

# O_NONBLOCK: opening a FIFO never waits for a writer (no effect on a regular file's reads);
# O_NOFOLLOW: a final component swapped for a symlink after the checks is refused, not followed.
OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW
READ_CHUNK_BYTES = 1 << 20
# Given a symlink's resolved target, why it must not be read (None: it may be).
RefuseTarget = Callable[[Path], "str | None"]

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symlink",
}


class OpenRules(TypedDict, total=False):
    """What `open_file` does with a symlink (by default: followed within the root), and whose file
    it reads."""

    follow_symlink: bool  # False: refused, wherever it points
    refuse_target: RefuseTarget  # given the target that would be opened, a reason not to
    owner_only: bool  # a file of mini-claude's own: refused when someone else owns it


class UnreadableFile(OSError):
    """The file exists but is not one we read (or not whole); the message says why, naming it."""


class FileBytes(NamedTuple):
    data: bytes
    was_cut: bool  # the file holds more than the bytes read
    size: int  # the whole file's size in bytes


class FileText(NamedTuple):
    text: str  # decoded by `text_decoding.decode_text`: a BOM honoured, bad bytes replaced
    was_cut: bool
    size: int
    warning: str | None = None  # how it was decoded, when that is worth a word (not UTF-8)


def kind(mode: int) -> str:
    """What a file that is not regular is: "a named pipe (FIFO)", "a directory"…"""
    return _KINDS.get(stat.S_IFMT(mode), "a special file")


def describe(error: OSError) -> str:
    """One line saying why a file was not read."""
    if isinstance(error, UnreadableFile) or not error.strerror:
        return str(error)
    name = f"{visible_path(str(error.filename))}: " if error.filename else ""
    return f"{name}{error.strerror}"


def owner_problem(path: Path, info: os.stat_result) -> str | None:
    """Why `path` (whose stat is `info`) is not read, or None: it belongs to someone else (in
    mini-claude's own folders, what someone else owns may have been swapped in). Root's is not
    someone else's: it could do anything anyway."""
    if info.st_uid in (os.geteuid(), 0):
        return None
    return f"{visible_path(str(path))} belongs to {owner_name(info.st_uid)}, not to you"


def owner_name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def format_size(size: int) -> str:
    """`512 bytes`, `40 KB`, `1.2 GB` (decimal units, as the limits are written)."""
    amount, unit = float(size), "bytes"
    for bigger in ("KB", "MB", "GB", "TB"):
        if amount < 1000:
            break
        amount, unit = amount / 1000, bigger
    return f"{size} bytes" if unit == "bytes" else f"{amount:.1f} {unit}".replace(".0 ", " ")


@contextlib.contextmanager
def open_file(path: Path, root: Path, **rules: Unpack[OpenRules]) -> Iterator[tuple[int, os.stat_result]]:
    """A read-only descriptor and its stat for `path`, checked as the module says.

    A symlink is followed only when `follow_symlink`, its target resolves inside `root`
    (compared by components after resolving both) and `refuse_target` (given the target that will
    be opened) says no reason against it. With `owner_only` (a file of mini-claude's own), a file
    that belongs to someone else is refused. FileNotFoundError when nothing is there."""
    real, followed = _checked(Path(path), Path(root), rules.get("follow_symlink", True))
    refuse_target, owner_only = rules.get("refuse_target"), rules.get("owner_only", False)
    reason = refuse_target(real) if refuse_target is not None and followed else None
    if reason is not None:
        raise UnreadableFile(f"{_shown(path)} is a symlink to {visible_path(str(real))}, {reason}")
    try:
        fd = os.open(real, OPEN_FLAGS)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnreadableFile(f"{_shown(path)} turned into a symlink while being opened") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # replaced between the checks and the open
            raise UnreadableFile(f"{_shown(path)} is {kind(info.st_mode)}, not a regular file")
        if owner_only and (problem := owner_problem(path, info)) is not None:
            raise UnreadableFile(f"{problem}: not read")
        yield fd, info
    finally:
        os.close(fd)


def read_bytes(path: Path, root: Path, max_bytes: int, **rules: Unpack[OpenRules]) -> FileBytes:
    """At most `max_bytes` of the file (see `open_file`)."""
    with open_file(path, root, **rules) as (fd, info):
        data = read_capped(fd, max_bytes)
    was_cut = len(data) > max_bytes
    return FileBytes(data[:max_bytes], was_cut, max(info.st_size, len(data)))


def read_capped(fd: int, max_bytes: int) -> bytes:
    """What the open file `fd` holds from where it stands, but never more than `max_bytes` and one
    byte: a result longer than `max_bytes` says there is more (a file that grew, a device)."""
    chunks, wanted = [], max_bytes + 1
    while wanted > 0 and (chunk := os.read(fd, min(wanted, READ_CHUNK_BYTES))):
        chunks.append(chunk)
        wanted -= len(chunk)
    return b"".join(chunks)


def read_text(path: Path, root: Path, max_bytes: int, **rules: Unpack[OpenRules]) -> FileText:
    """At most `max_bytes` of the file as text (`text_decoding.decode_text`: a BOM honoured, a
    cut never leaving half a character); UnreadableFile when it looks binary."""
    data, was_cut, size = read_bytes(path, root, max_bytes, **rules)
    decoded = decode_text(data, complete=not was_cut)
    if decoded.text is None:
        raise UnreadableFile(f"{_shown(path)}: {decoded.warning}")
    return FileText(decoded.text, was_cut, size, decoded.warning)


def check_file(path: Path, root: Path, max_bytes: int, *, owner_only: bool = False) -> None:
    """Raise unless `path` could be read (see `open_file`) and holds at most `max_bytes`: for a
    file another library then reads whole (the prompt history)."""
    with open_file(path, root, owner_only=owner_only) as (_, info):
        if info.st_size > max_bytes:
            raise UnreadableFile(
                f"{_shown(path)} is {format_size(info.st_size)}, over the {format_size(max_bytes)} limit"
            )


def _checked(path: Path, root: Path, follow_symlink: bool) -> tuple[Path, bool]:
    """The path to open: `path` itself, or a symlink's resolved target (and True: a symlink
    was followed); else UnreadableFile."""
    info = os.lstat(path)
    real = Path(os.path.realpath(path))
    is_link = stat.S_ISLNK(info.st_mode)
    if is_link:
        target = visible_path(str(real))
        if not follow_symlink:
            raise UnreadableFile(f"{_shown(path)} is a symlink (to {target}), not a regular file")
        if not is_within(real, root):
            raise UnreadableFile(f"{_shown(path)} is a symlink to {target}, outside {_shown(root)}")
        try:
            info = os.stat(real)
        except FileNotFoundError:
            raise UnreadableFile(f"{_shown(path)} is a symlink to {target}, which does not exist") from None
    elif not is_within(real, root):  # a folder on the way is a symlink out
        raise UnreadableFile(f"{_shown(path)} resolves to {visible_path(str(real))}, outside {_shown(root)}")
    if not stat.S_ISREG(info.st_mode):
        raise UnreadableFile(f"{_shown(path)} is {kind(info.st_mode)}, not a regular file")
    # Also when the two differ: a file swapped for a symlink between lstat and realpath.
    return real, is_link or real != Path(os.path.abspath(path))


def _shown(path: Path) -> str:
    return visible_path(str(path))
