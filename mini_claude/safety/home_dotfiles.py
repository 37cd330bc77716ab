"""What counts as a home dotfile: an entry of the home folder whose name starts with a dot
(`~/.ssh`, `~/.bashrc`), the XDG base folders wherever they are set inside home
(`XDG_CONFIG_HOME=~/config`), and whatever a symlink there leads to. With GNU stow or a dotfiles
repository `~/.ssh -> ~/dotfiles/ssh`: the keys live in `~/dotfiles/ssh` and are as secret there,
and `~/dotfiles/bash/.bashrc` runs in every shell as `~/.bashrc` does. Stow also links entries
inside a real dot folder (`~/.ssh/config -> ../dotfiles/ssh/.ssh/config`, `~/.config/gh/hosts.yml
-> ../../dotfiles/gh/.config/gh/hosts.yml`): symlinks up to DOT_FOLDER_SCAN_DEPTH deep in a dot
folder count. Each folder scanned has a budget of its own, so a huge `~/.cargo` or `~/.npm` cannot
use up what `~/.config` needs; the folders secrets live in are scanned first.

The targets are scanned once and kept until a folder they depend on changes (folder_cache).
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

from mini_claude.safety.folder_cache import FolderCache

DOT_FOLDER_SCAN_DEPTH = 3  # ~/.config/systemd/user/x.service: looked at this deep in a dot folder
DOT_FOLDER_MAX_ENTRIES = 5_000  # per dot folder (and per XDG folder): a huge one cannot hide another's links
DOT_SCAN_MAX_ENTRIES = 100_000  # all together: only a home of 20 dot folders as big as the budget reaches it
# Scanned first, in this order (then the XDG folders, then the rest by name): where secrets and
# start-up files live, should a home ever reach DOT_SCAN_MAX_ENTRIES.
SCANNED_FIRST = (".config", ".ssh", ".aws", ".gnupg", ".local", ".kube", ".docker", ".password-store")
XDG_HOME_VARIABLES = {  # the XDG base folders inside home hold what a dot folder holds; their defaults
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
}

_ScanKey = tuple[Path, tuple[Path, ...]]  # (real home, the XDG folders as named)


def dot_entry_targets(home: Path) -> frozenset[Path]:
    """The real places home's dot symlinks lead to (`home` real): those directly in home and those
    inside its real dot folders and XDG folders (bounded, see the constants). A target that is
    home itself or holds it (`~/.root -> /`) is left out: it would make every file a dotfile."""
    return _scans.get((home, tuple(named for named, _ in xdg_folders(home))))


def xdg_folders(home: Path) -> list[tuple[Path, Path]]:
    """(as named, real) for each XDG base folder, as set (an absolute value only, as the XDG spec
    reads them) or by default, that lies inside home, named or real, and is neither home nor holds
    it. Wherever it leads, it holds what a dot folder holds: all of it counts, even when it holds
    the project."""
    homes = _homes(home)
    found: list[tuple[Path, Path]] = []
    for variable, default in XDG_HOME_VARIABLES.items():
        value = os.environ.get(variable, "")
        named = Path(os.path.normpath(value)) if os.path.isabs(value) else Path(home, default)
        real = Path(os.path.realpath(named))
        inside = any(_strictly_inside(path, h) for path in (named, real) for h in homes)
        if inside and not any(h.is_relative_to(real) for h in homes):  # ~/.config -> / makes no dotfiles
            found.append((named, real))
    return found


def is_home_dotfile(path: Path, written: Path, home: Path, project_dir: Path) -> bool:
    """Whether `path` (resolved) or `written` (as named) lies in a home dot entry, such as ~/.ssh
    or ~/.bashrc, or in an XDG folder inside home, or `path` in what a dot symlink leads to
    (~/.ssh -> dotfiles/ssh); wherever the project is, even when it is ~, inside ~/.config or
    inside ~/dotfiles. A target that holds the project (`~/.work -> /work`, the project /work/app)
    is left out, unless the project was reached through that dot entry (see reached_through): not
    every project file is a dotfile, and what lies outside the project asks anyway."""
    real_home = Path(os.path.realpath(home))
    named = Path(os.path.normpath(written))
    real = Path(os.path.realpath(path))
    # A written path is compared with home as named too (/home may be a symlink to /data).
    homes = _homes(home)
    if top_entry(real, real_home).startswith(".") or any(top_entry(named, h).startswith(".") for h in homes):
        return True
    xdg = xdg_folders(home)
    if any(real.is_relative_to(xdg_real) or named.is_relative_to(xdg_named) for xdg_named, xdg_real in xdg):
        return True
    targets = dot_entry_targets(real_home)
    project = Path(os.path.realpath(project_dir))
    reached = reached_through(home, project)
    # A set: one look-up per folder above the path, whatever the number of links.
    return any(
        folder in targets and (folder in reached or _counts(folder, project))
        for folder in (real, *real.parents)
    )


def private_targets(home: Path, project_dir: Path) -> frozenset[Path]:
    """The real places is_home_dotfile counts for `project_dir` (both real) that are not dot
    entries of home: dot symlinks' targets and the XDG folders."""
    reached = reached_through(home, project_dir)
    targets = {t for t in dot_entry_targets(home) if t in reached or _counts(t, project_dir)}
    return frozenset(targets | {real for _, real in xdg_folders(home)})


def reached_through(home: Path, project_dir: Path) -> frozenset[Path]:
    """The real folders the project was reached through from a home dot entry: when the logical
    working directory ($PWD, if it names the project) lies under one (`cd ~/.vim/plugin` with
    ~/.vim -> dotfiles/vim), each folder on its way down from that entry, resolved. A dot
    symlink's target among them counts even though it holds the project."""
    pwd = os.environ.get("PWD", "")
    if not os.path.isabs(pwd):
        return frozenset()
    logical = Path(os.path.normpath(pwd))
    if Path(os.path.realpath(logical)) != Path(os.path.realpath(project_dir)):
        return frozenset()  # a stale $PWD names some other folder
    for named_home in _homes(home):
        if top_entry(logical, named_home).startswith("."):
            parts = logical.relative_to(named_home).parts
            return frozenset(
                Path(os.path.realpath(named_home.joinpath(*parts[:n]))) for n in range(1, len(parts) + 1)
            )
    return frozenset()


def _counts(target: Path, project_dir: Path) -> bool:
    """A target strictly holding the project is left out; one that is the project still counts:
    started in ~/dotfiles/ssh is started in ~/.ssh."""
    return target == project_dir or not project_dir.is_relative_to(target)


def top_entry(path: Path, home: Path) -> str:
    """The name of the entry directly in `home` that holds `path`; "" for home itself or elsewhere."""
    if path == home or not path.is_relative_to(home):
        return ""
    return path.relative_to(home).parts[0]


def _homes(home: Path) -> set[Path]:
    return {Path(os.path.realpath(home)), Path(os.path.abspath(os.path.expanduser(home)))}


def _strictly_inside(path: Path, folder: Path) -> bool:
    return path != folder and path.is_relative_to(folder)


def _scan(key: _ScanKey) -> tuple[set[str], frozenset[Path]]:
    """Home's dot symlinks, then each real dot folder's and XDG folder's, breadth first within its
    own budget; and the folders whose change could change the answer: those scanned, those in
    home on the way to each target, and the XDG folders and their parents (one may be made)."""
    home, xdg_named = key
    scanned: list[str] = [str(home)]
    links: list[str] = []
    dot_folders: list[str] = []
    for entry in _entries(str(home), None):
        if entry.name.startswith("."):
            if entry.is_symlink():
                links.append(entry.path)
            elif entry.is_dir(follow_symlinks=False):
                dot_folders.append(entry.path)
    xdg_real = [os.path.realpath(named) for named in xdg_named]
    roots = _scan_order(home, dot_folders, [folder for folder in xdg_real if os.path.isdir(folder)])
    left = DOT_SCAN_MAX_ENTRIES
    for root in roots:
        if left <= 0:
            break
        left -= _scan_folder(root, set(roots) - {root}, min(DOT_FOLDER_MAX_ENTRIES, left), scanned, links)
    targets: set[Path] = set()
    watched = set(scanned)
    for named in xdg_named:
        watched.update(str(folder) for folder in (named, *named.parents) if folder.is_relative_to(home))
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
    return watched, frozenset(targets)


_scans: FolderCache[_ScanKey, frozenset[Path]] = FolderCache(_scan)


def _scan_order(home: Path, dot_folders: list[str], xdg: list[str]) -> list[str]:
    first = [str(home / name) for name in SCANNED_FIRST if str(home / name) in dot_folders]
    return list(dict.fromkeys([*first, *xdg, *sorted(dot_folders)]))


def _scan_folder(root: str, other_roots: set[str], budget: int, scanned: list[str], links: list[str]) -> int:
    """Breadth first below `root`, at most `budget` entries, not into another root (it has a
    budget of its own): every symlink met goes into `links`. Returns the entries it used."""
    queue: deque[tuple[str, int]] = deque([(root, 1)])
    left = budget
    while queue and left > 0:
        folder, depth = queue.popleft()
        scanned.append(folder)
        entries = _entries(folder, left)
        left -= len(entries)
        for entry in entries:
            if entry.is_symlink():
                links.append(entry.path)
            elif (
                depth < DOT_FOLDER_SCAN_DEPTH
                and entry.is_dir(follow_symlinks=False)
                and entry.path not in other_roots
            ):
                queue.append((entry.path, depth + 1))
    return budget - left


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
