"""Recognising a git directory by what it is, not by its name: its hooks and `config` run code
(`core.fsmonitor` runs on every `git status`), so a write into one always asks.

A git directory may be called anything (`.gitstore`, `app.git`, a `--separate-git-dir`) and be
reached through a symlink (`app/.git -> ../.repo/projects/app.git`). Git accepts a folder holding a
`HEAD` file with `objects/` and `refs/` folders, or, for a linked worktree, `HEAD` with a
`commondir` file (setup.c, is_git_directory); we look for the same things.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

GIT_DIR_NAME = ".git"  # a folder in a plain checkout; a `gitdir: …` file in a worktree or submodule
# The entries that make git take a folder for its directory, and the file type each must have.
_GIT_DIR_ENTRIES: dict[str, Callable[[int], bool]] = {
    "HEAD": stat.S_ISREG,
    "objects": stat.S_ISDIR,
    "refs": stat.S_ISDIR,
    "commondir": stat.S_ISREG,
}
# Either shape is enough (HEAD first: a folder without one costs a single stat).
GIT_DIR_SHAPES = (("HEAD", "objects", "refs"), ("HEAD", "commondir"))


def writes_into_git_dir(resolved: Path, written: Path) -> bool:
    """True when writing `resolved`, asked for under the name `written`, changes or completes a
    git directory.

    That is: a component named `.git` on either path (in any letter case, as some filesystems
    ignore case), or a folder on the way (of the resolved path, and of the written one with `..`
    folded) that has the shape of a git directory, counting the entry this write creates there.
    So the write that would turn a folder into a git directory asks like one made inside it.
    """
    if any(part.casefold() == GIT_DIR_NAME for part in (*resolved.parts, *written.parts)):
        return True
    checked: set[tuple[Path, str]] = set()
    for target in (resolved, Path(os.path.normpath(written))):
        entry = target.name  # what this write creates or changes in `folder`
        for folder in target.parents:
            if (folder, entry) not in checked:
                checked.add((folder, entry))
                if _is_git_dir_once_written(folder, entry):
                    return True
            entry = folder.name
    return False


def _is_git_dir_once_written(folder: Path, written_entry: str) -> bool:
    return any(
        all(name == written_entry or _has_entry(folder, name) for name in shape) for shape in GIT_DIR_SHAPES
    )


def _has_entry(folder: Path, name: str) -> bool:
    try:
        mode = os.stat(folder / name).st_mode  # follows symlinks, as git does
    except OSError:
        return False  # missing, or unreadable: git could not use it either
    return _GIT_DIR_ENTRIES[name](mode)
