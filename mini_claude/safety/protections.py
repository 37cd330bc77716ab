"""The places no allow rule opens: git's own files, home dotfiles, mini-claude's settings (every
write asks, in every mode), private places (every read asks but in bypass), and files that
configure, instruct or run (a write asks even in accept-edits, one call at a time: the settings
files read at every start, CLAUDE.md anywhere, `.claude/`, `.envrc`, CI workflows, editor tasks).
Paths arrive resolved, with the name the model gave them."""

from __future__ import annotations

import os
from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path

from mini_claude.core.config import git_work_tree_root
from mini_claude.core.paths import is_within
from mini_claude.safety.git import git_write_risk
from mini_claude.safety.home_dotfiles import is_home_dotfile

# A PEM private key's armour: a start-up file holding one (an instruction, a skill) is never read.
PRIVATE_KEY_MARK = b"PRIVATE KEY-----"
GIT_DIR_REASON = "inside a git directory (its hooks and config run code)"
GIT_HOOKS_REASON = "a hook git runs (its hooks folder or core.hooksPath, through any link)"
GIT_CONFIG_REASON = "a config file git reads or includes (its settings run code)"
GIT_UNANSWERED_REASON = "git did not say which hooks and config files it uses here (why: the debug log)"
_GIT_REASONS = {
    "git_dir": GIT_DIR_REASON,
    "hooks": GIT_HOOKS_REASON,
    "git_config": GIT_CONFIG_REASON,
    "unanswered": GIT_UNANSWERED_REASON,
}
OWN_SETTINGS_REASON = "mini-claude's own settings"
HOME_DOTFILE_REASON = "a dotfile in your home folder"
INSTRUCTIONS_REASON = "instructions later conversations start with (CLAUDE.md, AGENTS.md, .claude/…)"
SETTINGS_REASON = "a settings file read at every start (it can allow tools and set the environment)"
RUNS_REASON = "a file that runs commands (.envrc, CI workflows, editor tasks, hooks)"
# Read into system prompts (Claude Code's and ours), in any folder, in any letter case.
INSTRUCTION_NAMES = frozenset({"claude.md", "claude.local.md", "agents.md"})
INSTRUCTION_FOLDERS = frozenset({".claude", ".mini-claude"})
# What a tool runs without a further approved command: direnv, editors, CI, hook managers.
RUNNING_NAMES = frozenset({".envrc"})
RUNNING_FOLDERS = frozenset({".vscode", ".idea", ".husky"})
SETTINGS_FOLDERS = (".claude", ".mini-claude")  # as app/settings/files.py reads them
SETTINGS_FILES = ("settings.json", "settings.local.json")


class Protections:
    """What always asks, for one project (`project_dir` resolved) and home."""

    def __init__(self, project_dir: Path, home: Path, protected_dirs: Iterable[Path]) -> None:
        self.project_dir = project_dir
        self.home_named = home
        self.home = Path(os.path.realpath(home))
        self.protected_dirs = [Path(os.path.realpath(p)) for p in protected_dirs]

    def write_reason(self, path: Path, written: Path) -> str | None:
        """Why writing `path` (named `written`) asks in every mode, or None for an ordinary file."""
        # Any git directory on the way, not only the project's: started in repo/src, repo/.git is
        # the one whose hooks run (and a submodule's or nested repository's count as much).
        risk = git_write_risk(path, written, self.project_dir, self.home_named)
        if risk == "git_dir":
            return GIT_DIR_REASON
        private = self.read_reason(path, written)  # ~/.gitconfig: a dotfile first
        return private if private is not None or risk is None else _GIT_REASONS[risk]

    def read_reason(self, path: Path, written: Path) -> str | None:
        """Why reading `path` (named `written`) asks in every mode but bypass, or None."""
        return private_reason(path, written, self.project_dir, self.home_named, self.protected_dirs)

    def edit_reason(self, path: Path, written: Path) -> str | None:
        """Why writing `path` asks even in accept-edits and under an allow rule: it instructs
        later conversations or runs without a further approved command. None otherwise."""
        if is_settings_file(path, written, self.project_dir):
            return SETTINGS_REASON
        if Path(os.path.realpath(self.project_dir / "CLAUDE.md")) == path:
            return INSTRUCTIONS_REASON  # what a CLAUDE.md symlink leads to
        for candidate in (path, Path(os.path.normpath(written))):
            names = [part.casefold() for part in candidate.parts]
            if (names and names[-1] in INSTRUCTION_NAMES) or INSTRUCTION_FOLDERS & set(names[:-1]):
                return INSTRUCTIONS_REASON
            if (names and names[-1] in RUNNING_NAMES) or RUNNING_FOLDERS & set(names[:-1]):
                return RUNS_REASON
            if any(a == ".github" and b == "workflows" for a, b in pairwise(names)):
                return RUNS_REASON
        return None

    def holds_private(self, folder: Path) -> bool:
        """Whether reading all of `folder` (resolved) would read private places: home's dot
        entries (it holds home) or mini-claude's own folders."""
        return self.home.is_relative_to(folder) or any(p.is_relative_to(folder) for p in self.protected_dirs)


def private_reason(
    path: Path, written: Path, project_dir: Path, home: Path, protected_dirs: Iterable[Path]
) -> str | None:
    """Why `path` (resolved; named `written`) is private: mini-claude's own settings or a home
    dotfile, or None. The one judgement for the file tools and for what start-up reads."""
    if any(is_within(path, protected) for protected in protected_dirs):
        return OWN_SETTINGS_REASON
    if is_home_dotfile(path, written, home, project_dir):
        return HOME_DOTFILE_REASON
    return None


def is_settings_file(path: Path, written: Path, project_dir: Path) -> bool:
    """Whether writing `path` (resolved; named `written`) changes a settings file: one by its
    folder and name in any folder and letter case (a sub-folder may be a project's root another
    day), or where a settings file of the working directory or its work tree's top leads as a
    symlink. In a trusted folder such a file allows tools and sets the environment."""
    named = Path(os.path.normpath(written))
    if any(
        place.name.casefold() in SETTINGS_FILES and place.parent.name.casefold() in SETTINGS_FOLDERS
        for place in (path, named)
    ):
        return True
    folders = {project_dir, git_work_tree_root(project_dir) or project_dir}
    return path in {
        Path(os.path.realpath(folder / name / file))
        for folder in folders
        for name in SETTINGS_FOLDERS
        for file in SETTINGS_FILES
        if os.path.islink(folder / name / file) or os.path.islink(folder / name)
    }
