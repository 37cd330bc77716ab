"""What counts as a home dotfile: an entry of the home folder whose name starts with a dot
(`~/.ssh`, `~/.bashrc`), and whatever a symlink there leads to. With GNU stow or a dotfiles
repository `~/.ssh -> ~/dotfiles/ssh`: the keys live in `~/dotfiles/ssh` and are as secret there,
and `~/dotfiles/bash/.bashrc` runs in every shell as `~/.bashrc` does. Stow also links entries
inside a real dot folder (`~/.ssh/config -> ../dotfiles/ssh/.ssh/config`, `~/.config/nvim ->
../dotfiles/nvim/.config/nvim`): symlinks up to DOT_FOLDER_SCAN_DEPTH deep in a dot folder count.

The targets are scanned once and kept until a folder they depend on changes: every check would
otherwise scan home (5,000 entries) and resolve every link again.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

DOT_FOLDER_SCAN_DEPTH = 3  # ~/.config/systemd/user/x.service: looked at this deep in a dot folder
DOT_FOLDER_MAX_ENTRIES = 1_000  # per dot folder: a huge ~/.cache cannot make a check slow
DOT_SCAN_MAX_ENTRIES = 5_000  # all dot folders together
# A folder changed this recently may change again within its mtime's tick (FAT: 2 s): such a scan
# is not kept, so a link added in the same tick is never missed.
MTIME_TICK_NS = 2_000_000_000

FolderState = tuple[str, int, int]  # (path, st_mtime_ns, st_ino); -1s when it could not be stat'ed


@dataclass(frozen=True)
class _Scan:
    folders: frozenset[FolderState]
    targets: frozenset[Path]


_scans: dict[Path, _Scan] = {}
_lock = threading.Lock()


def dot_entry_targets(home: Path) -> frozenset[Path]:
    """The real places home's dot symlinks lead to (`home` real): those directly in home and those
    inside its real dot folders (bounded, see the constants). A target that is home itself or holds
    it (`~/.root -> /`) is left out: it would make every file a dotfile."""
    with _lock:
        scan = _scans.get(home)
    if scan is not None and all(_state(path) == (path, mtime, ino) for path, mtime, ino in scan.folders):
        return scan.targets
    started = time.time_ns()
    scan = _scan(home)
    if all(mtime < started - MTIME_TICK_NS for _, mtime, _ in scan.folders):
        with _lock:
            _scans[home] = scan
    return scan.targets


def is_home_dotfile(path: Path, written: Path, home: Path, project_dir: Path) -> bool:
    """Whether `path` (resolved) or `written` (as named) lies in a home dot entry, such as ~/.ssh
    or ~/.bashrc, or `path` in what a dot symlink leads to (~/.ssh -> dotfiles/ssh); wherever the
    project is, even when it is ~, inside ~/.config or inside ~/dotfiles. A target that holds
    the project (`~/.work -> /work`, the project /work/app) is left out: not every project file
    is a dotfile, and what lies outside the project asks anyway."""
    real_home = Path(os.path.realpath(home))
    named = Path(os.path.normpath(written))
    real = Path(os.path.realpath(path))
    # A written path is compared with home as named too (/home may be a symlink to /data).
    homes = {real_home, Path(os.path.abspath(os.path.expanduser(home)))}
    if top_entry(real, real_home).startswith(".") or any(top_entry(named, h).startswith(".") for h in homes):
        return True
    targets = dot_entry_targets(real_home)
    project = Path(os.path.realpath(project_dir))
    # A set: one look-up per folder above the path, whatever the number of links.
    return any(folder in targets and _counts(folder, project) for folder in (real, *real.parents))


def private_targets(home: Path, project_dir: Path) -> frozenset[Path]:
    """dot_entry_targets as is_home_dotfile counts them for `project_dir` (both real)."""
    return frozenset(target for target in dot_entry_targets(home) if _counts(target, project_dir))


def _counts(target: Path, project_dir: Path) -> bool:
    """A target strictly holding the project is left out; one that is the project still counts:
    started in ~/dotfiles/ssh is started in ~/.ssh."""
    return target == project_dir or not project_dir.is_relative_to(target)


def top_entry(path: Path, home: Path) -> str:
    """The name of the entry directly in `home` that holds `path`; "" for home itself or elsewhere."""
    if path == home or not path.is_relative_to(home):
        return ""
    return path.relative_to(home).parts[0]


def _scan(home: Path) -> _Scan:
    """Home's dot symlinks, then breadth first each real dot folder's, and the folders whose
    change could change the answer: those scanned and those in home on the way to each target."""
    scanned: list[str] = [str(home)]
    links: list[str] = []
    queue: deque[tuple[str, int]] = deque()
    for entry in _entries(str(home), None):
        if entry.name.startswith("."):
            if entry.is_symlink():
                links.append(entry.path)
            elif entry.is_dir(follow_symlinks=False):
                queue.append((entry.path, 1))
    budgets = {folder: DOT_FOLDER_MAX_ENTRIES for folder, _ in queue}
    total = DOT_SCAN_MAX_ENTRIES
    while queue and total > 0:
        folder, depth = queue.popleft()
        top = folder if depth == 1 else _top(home, folder)
        limit = min(budgets[top], total)
        scanned.append(folder)
        entries = _entries(folder, limit)
        budgets[top] -= len(entries)
        total -= len(entries)
        for entry in entries:
            if entry.is_symlink():
                links.append(entry.path)
            elif depth < DOT_FOLDER_SCAN_DEPTH and entry.is_dir(follow_symlinks=False):
                queue.append((entry.path, depth + 1))
    targets: set[Path] = set()
    watched = set(scanned)
    for link in links:
        target = Path(os.path.realpath(link))
        try:  # the folders the link's own text passes through (a symlink there can be swapped)
            written = Path(os.path.normpath(os.path.join(os.path.dirname(link), os.readlink(link))))
        except OSError:
            written = target
        # Inside home only: a busy /tmp on the way would make the scan never worth keeping.
        on_the_way = (*target.parents, *written.parents)
        watched.update(str(folder) for folder in on_the_way if folder.is_relative_to(home))
        if not home.is_relative_to(target):
            targets.add(target)
    return _Scan(frozenset(_state(folder) for folder in watched), frozenset(targets))


def _entries(folder: str, limit: int | None) -> list[os.DirEntry[str]]:
    """Up to `limit` entries of `folder` (all when None); none when it cannot be read."""
    found: list[os.DirEntry[str]] = []
    try:
        with os.scandir(folder) as scan:
            for entry in scan:
                if limit is not None and len(found) >= limit:
                    break
                found.append(entry)
    except OSError:
        pass  # an unreadable folder has no links we could know of
    return found


def _top(home: Path, folder: str) -> str:
    return str(home / Path(folder).relative_to(home).parts[0])


def _state(folder: str) -> FolderState:
    try:
        info = os.stat(folder)
    except OSError:
        return (folder, -1, -1)
    return (folder, info.st_mtime_ns, info.st_ino)
