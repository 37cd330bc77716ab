"""The settings files mini-claude reads at every start (`.claude/settings.json`,
`.mini-claude/settings.local.json`, …): in a trusted folder they allow tools and set the
environment, so a write to one asks in every mode but bypass, one file at a time, by any name
that reaches it (another letter case, a symlink to it or the file it leads to)."""

from __future__ import annotations

import os
from pathlib import Path

from mini_claude.core.config import git_work_tree_root

SETTINGS_FOLDERS = (".claude", ".mini-claude")  # as app/settings/files.py reads them
SETTINGS_FILES = ("settings.json", "settings.local.json")
SETTINGS_REASON = "a settings file read at every start (it can allow tools and set the environment)"


def is_settings_file(path: Path, written: Path, project_dir: Path) -> bool:
    """Whether writing `path` (resolved; named `written`) changes a settings file: one by its
    folder and name in any folder (a sub-folder may be a project's root another day), or where
    a settings file of the working directory or its work tree's top leads as a symlink."""
    named = Path(os.path.normpath(written))
    if any(
        place.name.casefold() in SETTINGS_FILES and place.parent.name.casefold() in SETTINGS_FOLDERS
        for place in (path, named)
    ):
        return True
    return path in _link_targets(project_dir)


def _link_targets(project_dir: Path) -> set[Path]:
    folders = {project_dir, git_work_tree_root(project_dir) or project_dir}
    return {
        Path(os.path.realpath(folder / name / file))
        for folder in folders
        for name in SETTINGS_FOLDERS
        for file in SETTINGS_FILES
        if os.path.islink(folder / name / file) or os.path.islink(folder / name)
    }
