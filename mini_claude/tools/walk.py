"""Where a search starts and the walk below it, shared by list_files and grep_search.

The walk goes in name order, skips VCS, dependency and cache folders and, inside a git work tree,
what git ignores there (.gitignore, .git/info/exclude, core.excludesFile: git is asked, once per
repository met), and stops after MAX_SCANNED_ENTRIES (of a folder holding more than that, the
entries it read first, in name order: no folder is read past the cap). It skips what reading
would ask for every time, and says so: a search must not be the way around that question. That
is the home folder's dot entries (~/.ssh, ~/.aws …), wherever the walk meets home, and wherever
it meets them the places home's dot entries lead to (~/dotfiles/ssh for ~/.ssh) and mini-claude's
own folders (its data folder holds the history).
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.files import safe_read
from mini_claude.core.paths import display_path, resolve_path, visible_path, written_path
from mini_claude.safety.git import GIT_DIR_NAME, GitUnanswered, run_git
from mini_claude.safety.home_dotfiles import SearchHiding
from mini_claude.tools.base import ToolContext

log = logging.getLogger("mini_claude")

# Only version control, dependency and cache folders: never build output the user may care about.
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
MAX_SCANNED_ENTRIES = 200_000  # a walk stops here (e.g. someone searched the whole home folder)


@dataclass
class WalkState:
    hiding: SearchHiding | None = None  # home's dot entries and private places, skipped (not in bypass)
    scanned: int = 0
    stopped: bool = False
    hidden: int = 0  # home's dot entries skipped (not named: their names say what they hold)
    hidden_private: int = 0  # private entries skipped (not named: a name would be one to ask for)
    ignored: set[str] = field(default_factory=set)  # real paths git ignores, from the repositories met
    skipped_ignored: int = 0


def search_root(ctx: ToolContext, tool: str, path: str | None, *, want_dir: bool) -> tuple[Path, str]:
    """The resolved folder (or, unless `want_dir`, file) a search starts at, once reading it is
    allowed, and how it is shown to the model; a ToolError when it is missing or not searchable."""
    base = resolve_path(path or ".", ctx.project_dir)
    # Inside the project too: the project may be ~ itself, or a folder inside ~/.config.
    ctx.permissions.check_read(tool, base, written=written_path(path or ".", ctx.project_dir))
    shown = display_path(base, ctx.project_dir)
    try:
        mode = os.stat(base).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(prompts.notice("search_path_not_found", path=shown)) from None
    except OSError as error:
        raise ToolError(prompts.notice("file_unreadable", path=shown, error=error.strerror)) from None
    if want_dir and not stat.S_ISDIR(mode):
        raise ToolError(prompts.notice("list_path_not_dir", path=shown))
    if not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
        raise ToolError(prompts.notice("file_not_regular", path=shown, kind=safe_read.kind(mode)))
    return base, shown


def walk_state(ctx: ToolContext) -> WalkState:
    return WalkState(hiding=ctx.permissions.hidden_from_search())


def walk_notes(state: WalkState) -> str:
    """What the model must know about a walk that did not see everything: "" when it did."""
    notes = ""
    if state.skipped_ignored:
        notes += "\n" + prompts.notice("walk_skipped_gitignored", count=state.skipped_ignored)
    if state.hidden and state.hiding is not None:
        home = visible_path(state.hiding.home)
        notes += "\n" + prompts.notice("walk_skipped_home_dotfiles", count=state.hidden, home=home)
    if state.hidden_private:
        notes += "\n" + prompts.notice("walk_skipped_private", count=state.hidden_private)
    if state.stopped:
        notes += "\n" + prompts.notice("walk_stopped", limit=MAX_SCANNED_ENTRIES)
    return notes


def walk(
    folder: str, prefix: str, depth: int, max_depth: int | None, state: WalkState
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(path relative to the start, entry) in name order, depth first, skipping SKIPPED_DIRS, what
    git ignores, and the home folder's dot entries and the private paths (unless permitted).
    `folder` is a real path: the walk starts at a resolved folder and never follows a symlink, so
    every entry's path is real too, and comparing it with home or a private path by string is exact."""
    try:
        with os.scandir(folder) as scan:
            # No more than the walk may still look at (and one to tell that more follow): a
            # folder of millions of entries is not read whole to be sorted before the cap.
            entries = sorted(islice(scan, MAX_SCANNED_ENTRIES - state.scanned + 1), key=lambda e: e.name)
    except OSError:
        return  # unreadable folder: search what we can
    if depth == 1 or any(entry.name == GIT_DIR_NAME for entry in entries):
        state.ignored |= _ignored_by_git(folder)  # the start's repository, then each one met below
    hiding = state.hiding
    in_home = hiding is not None and folder == hiding.home
    for entry in entries:
        if state.scanned >= MAX_SCANNED_ENTRIES:
            state.stopped = True
            return
        state.scanned += 1
        if in_home and entry.name.startswith("."):
            state.hidden += 1
            continue
        if hiding is not None and hiding.hides(entry.path):
            state.hidden_private += 1
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and entry.name in SKIPPED_DIRS:
            continue
        if entry.path in state.ignored:
            state.skipped_ignored += 1
            continue
        rel = prefix + entry.name
        yield rel, entry
        if is_dir and (max_depth is None or depth < max_depth):
            yield from walk(entry.path, rel + "/", depth + 1, max_depth, state)


def _ignored_by_git(folder: str) -> set[str]:
    """The real paths below `folder` that git ignores there, a wholly ignored folder as one entry;
    none outside a work tree, without git, or when git fails (the walk then sees everything, as
    it does when the start itself is ignored: git lists it as `./`, which names no entry)."""
    listing = ("ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z")
    try:
        out = run_git(Path(folder), *listing)
    except GitUnanswered as error:
        log.warning("git did not list what it ignores in %s: %s", folder, error)
        return set()
    names = (out or b"").split(b"\0")
    return {os.path.join(folder, os.fsdecode(name).rstrip("/")) for name in names if name}


def shown_path(ctx: ToolContext, base: Path, rel: str) -> str:
    """A path found under `base`, as the model should pass it back (relative to the project), on
    one line whatever characters its name holds."""
    if base == ctx.project_dir:  # the common case, once per file searched: keep it cheap
        return visible_path(rel)
    return display_path(base / rel, ctx.project_dir)
