"""What git itself will use, asked of git: the git directory around a folder (and its common
directory), the folder it runs hooks from (`core.hooksPath` included) and the config files it
reads, includes followed. A write there changes code git runs, so it always asks (permissions).
Where git is not installed nothing runs hooks either; the rules that need no git still hold: a
`.git` anywhere in the path, and the write that would make a folder a git directory.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Literal

GIT_DIR_NAME = ".git"  # a folder in a plain checkout; a `gitdir: …` file in a worktree or submodule
GIT_TIMEOUT_S = 3.0  # one question to git; it answers in milliseconds unless something is wrong
HOOK_LINKS_MAX_ENTRIES = 1_000  # entries of a hooks folder read for symlinks (pre-commit -> ../x)
# What makes a folder a git directory, by name (git's is_git_directory): HEAD with objects and
# refs, or HEAD with commondir (a linked worktree's folder).
_SHAPE = frozenset({"HEAD", "objects", "refs", "commondir"})
# Kept when asking git: they choose the config files and settings every git the user runs reads.
_CONFIG_VARIABLE = re.compile(r"GIT_CONFIG_(GLOBAL|SYSTEM|NOSYSTEM|COUNT|PARAMETERS|KEY_\d+|VALUE_\d+)")
_REPOSITORY_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")
# A bare repository, or one another account owns, still holds hooks someone may run.
_EVERY_REPOSITORY = ("-c", "safe.bareRepository=all", "-c", "safe.directory=*")
_NOT_A_REPOSITORY = b"not a git repository"

Risk = Literal["git_dir", "hooks", "git_config", "unanswered"]
log = logging.getLogger("mini_claude")


class GitUnanswered(Exception):
    """git ran but did not answer: it timed out, or failed otherwise than "not a repository"."""


def run_git(folder: Path, *args: str, repository_from_env: bool = False) -> bytes | None:
    """The output of `git -C folder args`; None when git is not installed or `folder` is in no
    repository. No pager, prompt, fsmonitor or optional lock; the GIT_* variables that point git at
    another repository are dropped unless `repository_from_env`, and discovery is not stopped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or _CONFIG_VARIABLE.fullmatch(k)}
    if repository_from_env:
        env |= {k: os.environ[k] for k in _REPOSITORY_VARIABLES if k in os.environ}
    env |= {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_DISCOVERY_ACROSS_FILESYSTEM": "1"}
    env["LC_ALL"] = "C"  # its messages in English: "not a git repository" is read below
    command = ["git", "--no-pager", "-c", "core.fsmonitor=false", "-C", str(folder), *args]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            env=env,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        return None
    except (OSError, subprocess.TimeoutExpired) as error:
        raise GitUnanswered(str(error)) from None
    if done.returncode == 0:
        return done.stdout
    if _NOT_A_REPOSITORY in done.stderr:
        return None
    raise GitUnanswered(done.stderr.decode("utf-8", "replace").strip() or f"git exited {done.returncode}")


def git_write_risk(resolved: Path, written: Path, project_dir: Path, home: Path) -> Risk | None:
    """Why writing `resolved` (real), asked for as `written`, changes what git runs: "git_dir",
    "hooks", "git_config", or "unanswered" (git could not say); None for an ordinary file."""
    named = Path(os.path.normpath(written))
    if any(part.casefold() == GIT_DIR_NAME for part in (*resolved.parts, *named.parts)):
        return "git_dir"  # any letter case: some file systems ignore it; a new `.git` pointer file too
    if _completes_a_git_dir(resolved) or _completes_a_git_dir(named):
        return "git_dir"
    try:
        runs = _what_git_runs(project_dir, _existing_folder(resolved.parent), home)
    except GitUnanswered as error:
        log.warning("git did not answer which files it runs for %s: %s", resolved, error)
        return "unanswered"
    if _lands_in(resolved, runs.git_dirs):
        return "git_dir"
    if _lands_in(resolved, runs.hooks):
        return "hooks"
    return "git_config" if _lands_in(resolved, runs.configs) else None


@dataclass
class _Runs:
    """Real paths: git directories (and common ones), hooks folders with what the links in them
    lead to, and config files git reads or will read once they exist."""

    git_dirs: set[Path] = field(default_factory=set)
    hooks: set[Path] = field(default_factory=set)
    configs: set[Path] = field(default_factory=set)


def _what_git_runs(project_dir: Path, folder: Path, home: Path) -> _Runs:
    """What git uses for the project's repository, the written folder's and $GIT_DIR's."""
    runs = _Runs(configs=_default_config_files(home))
    questions = [(project_dir, False), (folder, False)]
    if os.environ.get("GIT_DIR"):
        questions.append((project_dir, True))
    listed: set[Path | None] = set()  # repositories whose config was listed (None: outside any)
    for start, from_env in questions:
        found = _repository(start, from_env)
        git_dir = found[0] if found else None
        if found is not None:
            runs.git_dirs |= {found[0], found[1]}
            runs.hooks.add(found[2])
        if git_dir not in listed:
            listed.add(git_dir)
            _config_files(start, git_dir, runs)
    runs.hooks |= {target for hooks in list(runs.hooks) for target in _link_targets(hooks)}
    return runs


def _repository(folder: Path, from_env: bool) -> tuple[Path, Path, Path] | None:
    """(git dir, common dir, hooks folder) of the repository git finds from `folder`, real."""
    asked = ("rev-parse", "--absolute-git-dir", "--git-common-dir", "--git-path", "hooks")
    out = run_git(folder, *_EVERY_REPOSITORY, *asked, repository_from_env=from_env)
    if out is None:
        return None
    lines = out.split(b"\n")
    if len(lines) != 4 or lines[3]:  # a path holding a line break: not told apart, so not trusted
        raise GitUnanswered(f"unexpected answer from git rev-parse: {out[:200]!r}")
    git_dir, common, hooks = (_real(folder, os.fsdecode(line)) for line in lines[:3])
    return git_dir, common, hooks


def _config_files(folder: Path, git_dir: Path | None, runs: _Runs) -> None:
    """Adds every config file git reads for `git_dir` (or outside any repository), their includes
    followed by git, and every file an include names whether or not it exists or its includeIf
    condition holds now; and every absolute `core.hooksPath`, which holds in any repository. The
    git dir is given absolute, so git names every file absolute."""
    repository = ("--git-dir", str(git_dir)) if git_dir is not None else ()
    listing = ("config", "--list", "--show-origin", "--includes", "-z")
    out = run_git(folder, *_EVERY_REPOSITORY, *repository, *listing) or b""
    fields = out.split(b"\0")
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        opened = os.fsdecode(origin[len(b"file:") :]) if origin.startswith(b"file:") else None
        if opened is not None:
            runs.configs.add(_real(folder, opened))
        key, _, value = entry.partition(b"\n")
        path = os.path.expanduser(os.fsdecode(value))
        include = key == b"include.path" or (key.startswith(b"includeif.") and key.endswith(b".path"))
        if key == b"core.hookspath" and os.path.isabs(path):
            runs.hooks.add(_real(folder, path))
        elif include and value and (opened is not None or os.path.isabs(path)):
            # git takes a relative include from a file only: from the folder of the file as git
            # opened it, `..` after any symlink, as open() does.
            runs.configs.add(_real(folder, os.path.join(os.path.dirname(opened or ""), path)))


def _default_config_files(home: Path) -> set[Path]:
    """The user's and the system's config files, which git reads as soon as they exist."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    named = [str(home / ".gitconfig"), os.path.join(xdg, "git", "config"), "/etc/gitconfig"]
    named += [os.environ[v] for v in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM") if os.environ.get(v)]
    return {Path(os.path.realpath(os.path.expanduser(path))) for path in named}


def _link_targets(hooks: Path) -> set[Path]:
    """Where the symlinks in a hooks folder lead (pre-commit -> ../../scripts/lint): git runs that."""
    try:
        with os.scandir(hooks) as entries:
            links = [e.path for e in islice(entries, HOOK_LINKS_MAX_ENTRIES) if e.is_symlink()]
    except OSError:
        return set()
    return {Path(os.path.realpath(link)) for link in links}


def _completes_a_git_dir(path: Path) -> bool:
    """Whether writing `path` gives a folder on its way the last entry it needs to be a git
    directory (HEAD, objects/…, refs/…, commondir): git would take it for one from then on."""
    for folder in path.parents:
        entry = path.relative_to(folder).parts[0]
        if entry in _SHAPE:
            present = {name for name in _SHAPE if os.path.lexists(folder / name)} | {entry}
            if "HEAD" in present and ({"objects", "refs"} <= present or "commondir" in present):
                return True
    return False


def _lands_in(path: Path, places: set[Path]) -> bool:
    """Whether `path` is or lies in one of `places` (folders or files), by name or (a file system
    that ignores letter case) by being the same entry on disk."""
    if any(path.is_relative_to(place) for place in places):
        return True
    wanted = {_identity(place) for place in places} - {None}
    return any(_identity(folder) in wanted for folder in (path, *path.parents))


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _existing_folder(path: Path) -> Path:
    while not path.is_dir() and path != path.parent:
        path = path.parent
    return path


def _real(folder: Path, path: str) -> Path:
    return Path(os.path.realpath(folder / path))
