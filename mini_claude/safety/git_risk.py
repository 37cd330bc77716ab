"""Why a write changes what git runs: a write into a git directory (git_dirs), into what a symlink
inside one leads to (`.git/hooks -> ../githooks`, `.git/hooks/pre-commit -> ../../scripts/x`:
git runs that file), into the hooks folder a config names (`core.hooksPath`) or what a symlink
there leads to, or into a config file git reads (`include.path`, `includeIf.*.path`, and the
files and settings git takes from `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_COUNT`
and `GIT_CONFIG_PARAMETERS`).
"""

from __future__ import annotations

import os
from collections import deque
from itertools import islice
from pathlib import Path
from typing import Literal

from mini_claude.safety.folder_cache import FolderCache
from mini_claude.safety.git_config import env_entries, hooks_folder, read_configs
from mini_claude.safety.git_dirs import (
    GIT_DIR_NAME,
    Repositories,
    completes_or_lies_in_a_git_dir,
    repositories_around,
)

LINK_SCAN_DEPTH = 2  # a git dir's entries and its folders' (hooks/pre-commit, info/x): links met count
LINK_SCAN_MAX_ENTRIES = 2_000  # entries read of one git dir or hooks folder for that
# Folders of a git dir that hold data git never runs: their own links count, not what is in them.
_DATA_FOLDERS = frozenset({"objects", "refs", "logs", "lfs"})
# Where git's system config lives: /etc for a distribution's git, the prefix's etc otherwise.
SYSTEM_CONFIG_FILES = ("/etc/gitconfig", "/usr/local/etc/gitconfig", "/opt/homebrew/etc/gitconfig")

Risk = Literal["git_dir", "hooks", "git_config", "git_config_unchecked"]


def git_write_risk(resolved: Path, written: Path, project_dir: Path, home: Path) -> Risk | None:
    """Why writing `resolved` (real), asked for under the name `written`, changes what git runs:
    "git_dir", "hooks", "git_config", or "git_config_unchecked" (a config git reads is too large
    to read here, so it may name any file); None for an ordinary file."""
    named = Path(os.path.normpath(written))
    if any(part.casefold() == GIT_DIR_NAME for part in (*resolved.parts, *written.parts)):
        return "git_dir"  # any letter case: some file systems ignore it
    if completes_or_lies_in_a_git_dir(resolved, named):
        return "git_dir"
    repos = repositories_around([project_dir, resolved.parent, named.parent], below=project_dir)
    if any(
        _within(resolved, place) for git_dir in repos.git_dirs for place in (git_dir, *_links.get(git_dir))
    ):
        return "git_dir"
    runs = read_configs(_config_files(repos, home), home, env_entries(os.environ))
    bases = [*repos.work_trees, *repos.git_dirs]  # a relative hooksPath: from the work tree, or a bare repo
    hooks = {hooks_folder(value, base, home) for value in runs.hooks_paths for base in bases}
    if any(_within(resolved, place) for folder in hooks if folder for place in (folder, *_links.get(folder))):
        return "hooks"
    if resolved in runs.config_files:
        return "git_config"
    return "git_config_unchecked" if runs.too_large else None


def _config_files(repos: Repositories, home: Path) -> list[Path]:
    """The config files git may read for these repositories: each one's own, the user's (both
    places, and $GIT_CONFIG_GLOBAL) and the system's (and $GIT_CONFIG_SYSTEM), whichever of them
    git reads now: a setting can change before git runs next."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    files = [home / ".gitconfig", Path(xdg) / "git" / "config", home / ".config" / "git" / "config"]
    files += [
        Path(os.path.expanduser(os.environ[v]))
        for v in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM")
        if os.environ.get(v)
    ]
    files += [Path(file) for file in SYSTEM_CONFIG_FILES]
    for git_dir in repos.git_dirs:
        files += [git_dir / "config", git_dir / "config.worktree"]
    return files


def _scan_links(folder: Path) -> tuple[list[str], frozenset[Path]]:
    """Where the symlinks in `folder` (a git dir or hooks folder) and in its folders lead, real;
    symlinked folders followed, LINK_SCAN_DEPTH deep, at most LINK_SCAN_MAX_ENTRIES entries."""
    targets: set[Path] = set()
    scanned: list[str] = []
    queue: deque[tuple[Path, int]] = deque([(folder, 1)])
    left = LINK_SCAN_MAX_ENTRIES
    while queue and left > 0:
        current, depth = queue.popleft()
        scanned.append(str(current))
        try:
            with os.scandir(current) as scan:
                entries = list(islice(scan, left))
        except OSError:
            continue  # nothing in an unreadable folder can be known
        left -= len(entries)
        for entry in entries:
            path = current / entry.name  # by name: a link inside a linked folder resolves through both
            if entry.is_symlink():
                targets.add(Path(os.path.realpath(path)))
            if depth < LINK_SCAN_DEPTH and entry.name not in _DATA_FOLDERS and _is_folder(entry):
                queue.append((path, depth + 1))
    return scanned, frozenset(targets)


_links: FolderCache[Path, frozenset[Path]] = FolderCache(_scan_links)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _within(path: Path, place: Path) -> bool:
    return path.is_relative_to(place)
