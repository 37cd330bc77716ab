"""Recognising a git directory by what it is, not by its name: its hooks and `config` run code
(`core.fsmonitor` runs on every `git status`), so a write into one always asks. So does a write
into the hooks folder a repository's config names (`core.hooksPath`), or into a config file it
includes (`include.path`, `includeIf.*.path`): git runs those just the same.

A git directory may be called anything (`.gitstore`, `app.git`, a `--separate-git-dir`) and be
reached through a symlink or a `gitdir:` file. A folder is one when git would take it for one
(setup.c, is_git_directory): a valid `HEAD` (a symlink whose text starts with `refs/`, even when
it leads nowhere, or a file holding `ref: refs/…` or an object id; validate_headref) and, in its
common folder (`commondir`, or itself), `objects` and `refs` entries git may enter
(access(X_OK)). We also take `HEAD` with a `commondir` file as one, and the target of every
`.git` symlink or `gitdir:` file, and every `commondir` target, whatever they hold.

The repositories that matter for a write are those of the project's folder, of the written
path's folder and of every folder above them, and those just below the project (a workspace
folder holding checkouts): those are found by a bounded scan, kept until a folder it looked at
changes (folder_cache).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.safety.folder_cache import FolderCache
from mini_claude.safety.git_config import read_small_file

GIT_DIR_NAME = ".git"  # a folder in a plain checkout; a `gitdir: …` file in a worktree or submodule
HEAD_READ_BYTES = 255  # what git reads of HEAD (validate_headref's buffer)
POINTER_READ_BYTES = 1 << 20  # git reads a `gitdir:` file up to 1 MB (setup.c, read_gitfile_gently)
GIT_SEARCH_DEPTH = 2  # repositories this deep below the project are found too (ws/app, ws/group/app)
GIT_SEARCH_FOLDER_MAX_ENTRIES = 2_000  # entries read of one folder there: a huge one cannot hide the rest
GIT_SEARCH_MAX_ENTRIES = 10_000  # entries read looking for them, all folders together
_OBJECT_ID = re.compile(rb"[0-9a-fA-F]{40}")  # sha1; a sha256 id starts the same way
_GIT_SPACE = b" \t\n\r"  # git's isspace()
# What the written entry completes: writing HEAD, objects/…, refs/… or commondir into a folder
# holding the rest makes it a git directory, so that write asks like one made inside it.
_SHAPE_ENTRIES = ("HEAD", "objects", "refs", "commondir")


@dataclass
class Repositories:
    """The git directories around some folders, real paths, and the work trees they belong to."""

    git_dirs: list[Path] = field(default_factory=list)
    work_trees: list[Path] = field(default_factory=list)

    def add(self, git_dir: Path, work_tree: Path | None = None) -> None:
        if git_dir not in self.git_dirs:
            self.git_dirs.append(git_dir)
        if work_tree is not None and work_tree not in self.work_trees:
            self.work_trees.append(work_tree)


def repositories_around(folders: Iterable[Path], *, below: Path | None = None) -> Repositories:
    """The git directories of every folder in `folders` and above them, and of the folders up to
    GIT_SEARCH_DEPTH below `below`: a folder that is one, the target of a `.git` symlink or
    `gitdir:` file in it, their `commondir` targets, `$GIT_DIR`."""
    repos = Repositories()
    if below is not None:
        for git_dir, work_tree in _below.get(Path(os.path.realpath(below))):
            repos.add(git_dir, work_tree)
    seen: set[Path] = set()
    for start in folders:
        for folder in (start, *start.parents):
            if folder in seen:
                break  # the rest of the way up was looked at already
            seen.add(folder)
            for git_dir, work_tree in _repositories_at(folder):
                repos.add(git_dir, work_tree)
    for variable in ("GIT_DIR", "GIT_COMMON_DIR"):
        if os.environ.get(variable):
            repos.add(Path(os.path.realpath(os.environ[variable])))
    for git_dir in list(repos.git_dirs):
        common = _pointer(git_dir / "commondir", git_dir, prefix=b"")
        if common is not None:
            repos.add(common)
    return repos


def _repositories_at(folder: Path) -> list[tuple[Path, Path | None]]:
    """`folder` as a git directory, and where its `.git` entry leads (with `folder` as work tree)."""
    found: list[tuple[Path, Path | None]] = []
    if is_git_dir(folder):
        found.append((Path(os.path.realpath(folder)), None))
    pointed = _dot_git_target(folder / GIT_DIR_NAME)
    if pointed is not None:
        found.append((pointed, Path(os.path.realpath(folder))))
    return found


def _scan_below(project: Path) -> tuple[list[str], tuple[tuple[Path, Path | None], ...]]:
    """The repositories of the folders up to GIT_SEARCH_DEPTH below `project` (breadth first,
    symlinked folders followed, a git directory not entered), and the folders whose change could
    change that: those read and those looked at."""
    found: list[tuple[Path, Path | None]] = []
    watched = [str(project)]
    level, left = [project], GIT_SEARCH_MAX_ENTRIES
    for _ in range(GIT_SEARCH_DEPTH):
        deeper: list[Path] = []
        for folder in level:
            if left <= 0:
                break
            entries = _folder_entries(folder, min(GIT_SEARCH_FOLDER_MAX_ENTRIES, left))
            left -= len(entries)
            for name, is_folder in entries:
                candidate = folder / name
                if name == GIT_DIR_NAME or not is_folder:
                    continue  # the folder's own .git: found as its pointer
                watched.append(str(candidate))  # a `git init` there changes it
                here = _repositories_at(candidate)
                found += here
                if not any(work_tree is None for _, work_tree in here):
                    deeper.append(candidate)  # a bare repository is not searched for more
        level = deeper
    return watched, tuple(dict.fromkeys(found))


_below: FolderCache[Path, tuple[tuple[Path, Path | None], ...]] = FolderCache(_scan_below)


def _folder_entries(folder: Path, limit: int) -> list[tuple[str, bool]]:
    """(name, whether it is a folder or a symlink to one) for up to `limit` entries of `folder`."""
    found: list[tuple[str, bool]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if len(found) >= limit:
                    break
                found.append((entry.name, _is_folder(entry)))
    except OSError:
        pass  # an unreadable folder holds no repository we could know of
    return found


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def is_git_dir(folder: Path, written_entry: str | None = None) -> bool:
    """Whether git takes `folder` for a git directory, or would once `written_entry` (one of its
    own entries) is written there."""
    if written_entry != "HEAD" and not _valid_head(folder / "HEAD"):
        return False
    if written_entry == "commondir" or _exists(folder / "commondir"):
        return True  # a linked worktree's folder; its objects and refs live in the common one
    objects = written_entry == "objects" or _enterable(folder / "objects") or _object_dir_from_env()
    return objects and (written_entry == "refs" or _enterable(folder / "refs"))


def completes_or_lies_in_a_git_dir(resolved: Path, named: Path) -> bool:
    """Whether `resolved` or `named` lies in a folder git takes for a git directory, or is the
    entry whose writing would make its folder one."""
    checked: set[tuple[Path, str]] = set()
    for target in (resolved, named):
        entry = target.name  # what this write creates or changes in `folder`
        for folder in target.parents:
            if (folder, entry) not in checked:
                checked.add((folder, entry))
                if is_git_dir(folder, entry if entry in _SHAPE_ENTRIES else None):
                    return True
            entry = folder.name
    return False


def _valid_head(head: Path) -> bool:
    """git's validate_headref: lstat, so a symlink into refs/ counts even when it leads nowhere."""
    try:
        if stat.S_ISLNK(os.lstat(head).st_mode):
            return os.readlink(head).startswith("refs/")
    except OSError:
        return False
    text = _first_bytes(head, HEAD_READ_BYTES)
    if text is None:
        return False
    if text.startswith(b"ref:"):
        return text[4:].lstrip(_GIT_SPACE).startswith(b"refs/")
    return _OBJECT_ID.match(text) is not None


def _dot_git_target(dot_git: Path) -> Path | None:
    """Where a `.git` entry leads: a folder or symlink (resolved), a `gitdir:` file's path."""
    try:
        mode = os.lstat(dot_git).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode) or stat.S_ISDIR(mode):
        return Path(os.path.realpath(dot_git))
    return _pointer(dot_git, dot_git.parent, prefix=b"gitdir:")


def _pointer(file: Path, base: Path, *, prefix: bytes) -> Path | None:
    """The path a `gitdir:` or `commondir` file holds, relative to `base`, resolved."""
    text = read_small_file(file, POINTER_READ_BYTES)
    if text is None or not text.startswith(prefix):
        return None
    value = text[len(prefix) :].strip(_GIT_SPACE)
    if not value:
        return None
    return Path(os.path.realpath(base / os.fsdecode(value)))


def _first_bytes(file: Path, limit: int) -> bytes | None:
    """What git reads of HEAD: its first `limit` bytes, however large it is; regular files only."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO must not hang us
    except OSError:
        return None
    try:
        return os.read(fd, limit) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def _enterable(path: Path | str) -> bool:
    """git's test for `objects` and `refs`: any entry it may enter (a folder, or a symlink to one;
    even an executable file), access(X_OK)."""
    return os.access(path, os.X_OK)


def _object_dir_from_env() -> bool:
    """git looks for objects in $GIT_OBJECT_DIRECTORY instead, when it is set."""
    objects = os.environ.get("GIT_OBJECT_DIRECTORY")
    return objects is not None and bool(objects) and _enterable(objects)
