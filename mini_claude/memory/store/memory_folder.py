"""The memory folder itself: whether it may be used at all, what lies inside it, and its lock.

Every change to the folder happens under an exclusive lock on `.lock` in it, so two sessions in
the same project never lose each other's memories from the folder or the index.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.files.private_files import create_folders, foreign_level, narrow_levels
from mini_claude.core.paths import is_within, stays_in_its_folder, visible_path

log = logging.getLogger("mini_claude")

DIR_MODE = 0o700
LOCK_FILE = ".lock"
GITIGNORE_FILE = ".gitignore"
GITIGNORE_TEXT = """\
# Written by mini-claude: the memories here are shared; what it derives from them is not
# (the index, the caches, the trash of old versions, its lock).
.*
!.gitignore
MEMORY.md
"""

# The folders this thread holds the lock of: taking it again inside is a no-op (a tidy applies
# many saves as one change), while other threads and processes still wait for it.
_held = threading.local()


def escape_problem(root: Path) -> str | None:
    """Why the memory folder must not be used at all, or None: it is a symlink pointing out of the
    folder that holds it (to `~/.ssh`, say), or it or a folder above it in `~/.mini-claude`
    belongs to someone else (who could have swapped in its memories), so nothing is read,
    indexed or written there."""
    if (foreign := foreign_level(root)) is not None:
        return prompts.notice("memory_dir_foreign", memory_dir=visible_path(str(root)), reason=foreign)
    if stays_in_its_folder(root):
        return None
    return prompts.notice(
        "memory_dir_escapes",
        memory_dir=visible_path(str(root)),
        target=visible_path(os.path.realpath(root)),
        parent=visible_path(str(root.parent)),
    )


def holds(root: Path, path: Path) -> bool:
    """True when the memory folder may be used and the resolved `path` lies inside it."""
    return stays_in_its_folder(root) and is_within(path, root)


@contextlib.contextmanager
def exclusive_lock(root: Path) -> Iterator[None]:
    """Hold the folder's lock (creating the folder, mode 0700, on first use); re-entrant within
    one thread."""
    if (problem := escape_problem(root)) is not None:
        raise MemoryStoreError(problem)
    held: set[str] = _held.__dict__.setdefault("roots", set())
    key = os.path.realpath(root)
    if key in held:
        yield
        return
    try:
        create_folders(root)  # ~/.mini-claude and its projects folder too, each 0700
        narrow_levels(root)  # any an older version left open to others' writes
        fd = _open_lock_file(root / LOCK_FILE)
    except OSError as error:
        # Name the file when it is not the folder itself (a `.lock` that is a folder, say).
        culprit = "" if error.filename in (None, str(root)) else f" ({Path(error.filename).name})"
        reason = prompts.notice("memory_dir_is_file") if root.is_file() else error.strerror
        raise MemoryStoreError(
            prompts.notice("memory_dir_unusable", memory_dir=root, reason=f"{reason}{culprit}")
        ) from error
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)
    finally:
        os.close(fd)  # closing releases the lock


def _open_lock_file(path: Path) -> int:
    """The lock file, opened for flock. A symlink, FIFO or device there is not our lock (we only
    ever make regular ones): it is removed and a lock made, never followed or opened."""
    with contextlib.suppress(FileNotFoundError):
        mode = os.lstat(path).st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            log.warning("replacing %s: it was %s", path, safe_read.kind(mode))
            os.unlink(path)
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK
    fd = os.open(path, flags, 0o600)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped in between: refuse rather than lock it
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def ignore_derived_files(root: Path) -> None:
    """A `.gitignore` in a memory folder inside a repository (the team's), unless there is one:
    git then shares the memories, not the files derived from them. Made only beside a folder
    that may be used; a failure is left to the write that follows to report."""
    if escape_problem(root) is not None or os.path.lexists(root / GITIGNORE_FILE):
        return
    with contextlib.suppress(OSError):
        os.makedirs(root, mode=DIR_MODE, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(root / GITIGNORE_FILE, flags, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(GITIGNORE_TEXT)
