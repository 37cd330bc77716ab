"""What counts as a home dotfile: an entry of the home folder whose name starts with a dot (`~/.ssh`,
`~/.bashrc`) and all inside it, the XDG base folders inside home wherever they are set
(`XDG_CONFIG_HOME=~/config`), and the places home's dot entries lead to: a dot symlink's target
(`~/.ssh -> dotfiles/ssh`), and a file reached through a dot entry by the same names, as GNU stow
lays a dotfiles repository out (`~/dotfiles/nvim/.config/nvim/init.lua` is
`~/.config/nvim/init.lua` when `~/.config/nvim` links there). Nothing is scanned but home's own
entries, so no budget or cache is needed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

XDG_HOME_VARIABLES = {  # the XDG base folders inside home hold what a dot folder holds; their defaults
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
}


@dataclass(frozen=True)
class SearchHiding:
    """What a search walk skips and counts: the dot entries of `home` (real), and wherever it meets
    them the real paths in `private` and the files home's dot entries lead to by name."""

    home: str
    private: frozenset[str]
    # Paths a deny or ask rule covers (the walk must not be the way around the rule), if any.
    ruled_out: Callable[[str], bool] | None = field(default=None, compare=False)

    def hides(self, path: str) -> bool:
        """Whether the walk skips `path` (real, not directly in home) as private."""
        if path in self.private or (self.ruled_out is not None and self.ruled_out(path)):
            return True
        return "/." in path and mirrors_a_home_dot_entry(Path(path), Path(self.home))


def is_home_dotfile(path: Path, written: Path, home: Path, project_dir: Path) -> bool:
    """Whether `path` (resolved) or `written` (as named) is a home dotfile (see the module's
    docstring), wherever the project is: in ~, inside ~/.config or inside ~/dotfiles."""
    homes = _homes(home)
    real = Path(os.path.realpath(path))
    named = Path(os.path.normpath(written))
    if any(_top_entry(p, h).startswith(".") for p in (real, named) for h in homes):
        return True
    if any(real.is_relative_to(xdg) or named.is_relative_to(as_named) for as_named, xdg in xdg_folders(home)):
        return True
    real_home = Path(os.path.realpath(home))
    project = Path(os.path.realpath(project_dir))
    # Started inside a dot link's target (`cd ~/.vim/plugin`, ~/.vim -> dotfiles/vim), the project
    # is what you work on: it reads and writes as any project; the rest of the target still counts.
    return any(
        real.is_relative_to(target) and (not _holds(target, project) or not real.is_relative_to(project))
        for target in dot_link_targets(real_home)
    ) or mirrors_a_home_dot_entry(real, real_home)


def private_places(home: Path, project_dir: Path) -> frozenset[Path]:
    """The real places outside home's dot entries that is_home_dotfile counts, for a search walk
    to skip wherever it meets them (`home`, `project_dir` real): dot symlinks' targets but one
    holding the project (a search from above must still find it), and the XDG folders."""
    targets = {t for t in dot_link_targets(home) if not _holds(t, project_dir)}
    return frozenset(targets | {real for _, real in xdg_folders(home)})


def dot_link_targets(home: Path) -> set[Path]:
    """Where the dot symlinks directly in `home` (real) lead, but a target that is home or holds
    it: `~/.root -> /` would make every file a dotfile."""
    try:
        with os.scandir(home) as entries:
            links = [e.path for e in entries if e.name.startswith(".") and e.is_symlink()]
    except OSError:
        return set()
    targets = {Path(os.path.realpath(link)) for link in links}
    return {target for target in targets if not home.is_relative_to(target)}


def _holds(folder: Path, inner: Path) -> bool:
    return folder != inner and inner.is_relative_to(folder)


def mirrors_a_home_dot_entry(real: Path, home: Path) -> bool:
    """Whether `real` is what a home dot entry named like its tail leads to: for each component
    starting with a dot (`~/dotfiles/nvim/.config/nvim/x`), whether `~/.config/nvim/x` resolves to it."""
    parts = real.parts
    for i, part in enumerate(parts):
        if not part.startswith(".") or part in (".", ".."):
            continue
        mirror = home.joinpath(*parts[i:])
        # A mirror whose folder does not exist resolves to itself: no need to ask the file system.
        if mirror != real and os.path.isdir(mirror.parent) and Path(os.path.realpath(mirror)) == real:
            return True
    return False


def xdg_folders(home: Path) -> list[tuple[Path, Path]]:
    """(as named, real) for each XDG base folder, as set (an absolute value only, as the XDG spec
    reads them) or by default, that lies inside home, named or real, and neither is home nor holds
    it. Wherever it leads, it holds what a dot folder holds: all of it counts, even the project."""
    homes = _homes(home)
    found: list[tuple[Path, Path]] = []
    for variable, default in XDG_HOME_VARIABLES.items():
        value = os.environ.get(variable, "")
        named = Path(os.path.normpath(value)) if os.path.isabs(value) else Path(home, default)
        real = Path(os.path.realpath(named))
        inside = any(p != h and p.is_relative_to(h) for p in (named, real) for h in homes)
        if inside and not any(h.is_relative_to(real) for h in homes):
            found.append((named, real))
    return found


def _top_entry(path: Path, home: Path) -> str:
    """The name of the entry directly in `home` that holds `path`; "" for home itself or elsewhere."""
    if path == home or not path.is_relative_to(home):
        return ""
    return path.relative_to(home).parts[0]


def _homes(home: Path) -> set[Path]:
    """Home real and as named: a written path is compared with both (/home may link to /data)."""
    return {Path(os.path.realpath(home)), Path(os.path.abspath(os.path.expanduser(home)))}
