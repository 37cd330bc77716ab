"""Files only their user may read: the input history, the debug log, memories and transcripts
hold what was typed and run. They are created 0600 in a 0700 folder whatever the umask, and
narrowed when an older version (or a umask of 022 at the time) left them wider. Every folder we
create on the way is 0700 too (as the XDG spec asks): under umask 000 a 0777 `~/.mini-claude`
would let anyone swap a project's memory folder for one of their own. So a folder of ours that
others may write into is narrowed, and a folder or file in mini-claude's own folders that
belongs to someone else (neither you nor root) is never read: it may have been swapped in."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from mini_claude.core.config import protected_dirs
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path

FOLDER_MODE = 0o700
FILE_MODE = 0o600
OTHERS_BITS = 0o077  # group and other permissions: none on a private file or its folder
OTHERS_WRITE_BITS = 0o022  # what lets someone else swap what a folder holds
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# The settings that say where mini-claude's own folders are (`config.protected_dirs`).
_WHERE_OUR_FOLDERS_ARE = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")


def private_folder(path: Path) -> None:
    """Create `path` and the folders missing above it, each 0700, and narrow `path` itself to
    0700 if it was there and wider; a folder above it inside mini-claude's own folders that
    others may write into is narrowed too (others outside ours keep their modes). Raises
    OSError: UnreadableFile when one of those levels belongs to someone else."""
    create_folders(path)
    if (problem := foreign_level(path)) is not None:
        raise safe_read.UnreadableFile(problem)
    make_private(path, FOLDER_FLAGS, FOLDER_MODE)
    narrow_levels(path)


def create_folders(path: Path) -> None:
    """`mkdir -p` whose every new folder is 0700 (os.makedirs gives only the last one its mode)."""
    missing: list[Path] = []
    folder = path
    while not folder.is_dir():
        if os.path.lexists(folder) and folder != path:  # a file where a folder must be, as mkdir -p says
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise


def make_private(path: Path, flags: int, mode: int) -> None:
    """Open `path` (creating a missing file with `mode`) and take away what others may do with it;
    raises OSError (UnreadableFile when it is neither a folder nor a regular file)."""
    fd = os.open(path, flags, mode)
    try:
        narrow(fd, mode, path)
    finally:
        os.close(fd)


def narrow(fd: int, mode: int, path: Path) -> None:
    """Give the open folder or regular file `fd` exactly `mode` if others may use it. A file with
    another link (a hard link) is refused: its mode is another name's too."""
    info = os.fstat(fd)
    if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
        raise safe_read.UnreadableFile(f"{visible_path(str(path))} is {safe_read.kind(info.st_mode)}")
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        raise safe_read.UnreadableFile(hard_link_problem(path, info))
    if info.st_mode & OTHERS_BITS:
        os.fchmod(fd, mode)


def hard_link_problem(path: Path, info: os.stat_result) -> str:
    return f"{visible_path(str(path))} has {info.st_nlink - 1} other name(s) (a hard link): not ours alone"


def private_place(path: Path) -> bool:
    """Whether `path` lies in one of mini-claude's own folders (`~/.mini-claude`, its data, state,
    log and config folders), where every file is private."""
    return _holding_folder(Path(os.path.realpath(path))) is not None


def foreign_level(path: Path) -> str | None:
    """Why the folder or file `path` is not ours to use, or None: it, or a folder above it inside
    the mini-claude folder holding it, belongs to someone else (who could have swapped in what
    it holds). Levels that do not exist are passed over."""
    for level in _levels(path):
        try:
            info = os.stat(level)
        except OSError:
            continue
        if (problem := safe_read.owner_problem(level, info)) is not None:
            return problem
    return None


def foreign_entry(path: Path) -> str | None:
    """Why the file named `path` is not ours to read, or None: the name itself (a symlink
    planted there included), the file it leads to, or a folder above either inside
    mini-claude's own folders belongs to someone else. For a file read from those folders by
    name (settings, instructions, the trust file) rather than through a memory folder."""
    try:
        info = os.lstat(path)
    except OSError:
        return None  # nothing there: nothing of someone else's to read
    if (problem := safe_read.owner_problem(path, info)) is not None:
        return problem
    return foreign_level(path.parent) or foreign_level(path)


def narrow_levels(path: Path) -> None:
    """Make each existing folder from `path` up to the mini-claude folder holding it 0700 when
    others may write into it (left so by an older version under umask 000) and it is ours."""
    for level in _levels(path):
        try:
            info = os.stat(level)
            if (
                stat.S_ISDIR(info.st_mode)
                and info.st_uid == os.geteuid()
                and info.st_mode & OTHERS_WRITE_BITS
            ):
                os.chmod(level, FOLDER_MODE)
        except OSError:
            continue  # gone meanwhile, or not ours to change: foreign_level says what matters


def _levels(path: Path) -> list[Path]:
    """`path` resolved, and the folders above it up to the mini-claude folder holding it."""
    real = Path(os.path.realpath(path))
    top = _holding_folder(real)
    if top is None:
        return [real]
    return [real, *(parent for parent in real.parents if parent.is_relative_to(top))]


def _holding_folder(real: Path) -> Path | None:
    environment = tuple(os.environ.get(name) for name in _WHERE_OUR_FOLDERS_ARE)
    for top in _our_folders(environment):
        if real.is_relative_to(top):
            return top
    return None


@lru_cache(maxsize=8)
def _our_folders(environment: tuple[str | None, ...]) -> tuple[Path, ...]:
    """mini-claude's own folders, resolved, for these settings (asked on every read of a memory
    folder: found once)."""
    return tuple(Path(os.path.realpath(folder)) for folder in protected_dirs())


@contextlib.contextmanager
def locked(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file `lock` (made 0600) for the block: one writer of a file
    of ours at a time. A symlink there is not followed, and a FIFO or device is refused (OSError
    naming it), never waited on."""
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    fd = os.open(lock, flags, FILE_MODE)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, f"{visible_path(str(lock))} is not a regular file: remove it")
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
