"""What counts as a home dotfile: an entry of the home folder whose name starts with a dot
(`~/.ssh`, `~/.bashrc`), and whatever such an entry leads to when it is a symlink. With GNU stow
or a dotfiles repository `~/.ssh -> ~/dotfiles/ssh`: the keys live in `~/dotfiles/ssh` and are
as secret there, and `~/dotfiles/bash/.bashrc` runs in every shell as `~/.bashrc` does.
"""

from __future__ import annotations

import os
from pathlib import Path


def dot_entry_targets(home: Path) -> list[Path]:
    """The real places home's dot symlinks lead to (`home` real). A target that is home itself or
    holds it (`~/.root -> /`) is left out: it would make every file a dotfile."""
    targets: list[Path] = []
    try:
        with os.scandir(home) as scan:
            links = [entry.path for entry in scan if entry.name.startswith(".") and entry.is_symlink()]
    except OSError:
        return targets  # an unreadable home has no dot symlinks we could know of
    for link in links:
        target = Path(os.path.realpath(link))
        if not home.is_relative_to(target) and target not in targets:
            targets.append(target)
    return targets


def top_entry(path: Path, home: Path) -> str:
    """The name of the entry directly in `home` that holds `path`; "" for home itself or elsewhere."""
    if path == home or not path.is_relative_to(home):
        return ""
    return path.relative_to(home).parts[0]
