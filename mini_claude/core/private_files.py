"""Files only their user may read: the input history, the debug log, memories and transcripts
hold what was typed and run. They are created 0600 in a 0700 folder whatever the umask, and
narrowed when an older version (or a umask of 022 at the time) left them wider. Every folder we
create on the way is 0700 too (as the XDG spec asks): under umask 000 a 0777 `~/.mini-claude`
would let anyone swap a project's memory folder for one of their own."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from mini_claude.core import safe_read
from mini_claude.core.paths import visible_path

FOLDER_MODE = 0o700
FILE_MODE = 0o600
OTHERS_BITS = 0o077  # group and other permissions: none on a private file or its folder
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def private_folder(path: Path) -> None:
    """Create `path` and the folders missing above it, each 0700, and narrow `path` itself to
    0700 if it was there and wider; folders that were already above it keep their modes.
    Raises OSError."""
    create_folders(path)
    make_private(path, FOLDER_FLAGS, FOLDER_MODE)


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
    """Give the open folder or regular file `fd` exactly `mode` if others may use it."""
    info = os.fstat(fd)
    if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
        raise safe_read.UnreadableFile(f"{visible_path(str(path))} is {safe_read.kind(info.st_mode)}")
    if info.st_mode & OTHERS_BITS:
        os.fchmod(fd, mode)
