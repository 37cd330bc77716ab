"""CLAUDE.local.md holds one person's notes for a project, and `.mini-claude/settings.local.json`
their own permission rules: they belong in .gitignore. Git itself says whether one is ignored
already (`git check-ignore`, which knows every ignore file and rule); adding it appends one line
to the `.gitignore` at the top of the work tree."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from mini_claude.core.config import git_work_tree_root
from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import write_atomic

LOCAL_FILE = "CLAUDE.local.md"
GITIGNORE = ".gitignore"
GIT_TIMEOUT_S = 5
GITIGNORE_MAX_BYTES = 1_000_000
NOT_IGNORED = 1  # `git check-ignore -q`'s exit status (0: ignored, 128: it could not tell)


def unignored_local_file(cwd: Path, name: str = LOCAL_FILE) -> Path | None:
    """The work tree's root when `name` (a path from the root) is not ignored there yet; None
    when it is, when there is no work tree, or when git cannot tell."""
    root = git_work_tree_root(Path(os.path.realpath(cwd)))
    if root is None:
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "check-ignore", "-q", "--no-index", "--", name],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=GIT_TIMEOUT_S, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return root if done.returncode == NOT_IGNORED else None


def ignore_local_file(root: Path, name: str = LOCAL_FILE) -> str:
    """Append `name` to `root`/.gitignore; a line saying what was done (or why not)."""
    path = root / GITIGNORE
    try:
        found = safe_read.read_bytes(path, root, GITIGNORE_MAX_BYTES, follow_symlink=False)
    except FileNotFoundError:
        found = None
    except OSError as error:  # a symlink, a FIFO, a folder: named, and left as it is
        return f"{GITIGNORE} not changed: {safe_read.describe(error)}"
    if found is not None and found.was_cut:
        return f"{GITIGNORE} is over {safe_read.format_size(GITIGNORE_MAX_BYTES)}: add {name} yourself"
    before = found.data.decode("utf-8", "surrogateescape") if found is not None else ""
    separator = "" if not before or before.endswith("\n") else "\n"
    try:
        write_atomic(path, f"{before}{separator}{name}\n")
    except OSError as error:
        return f"{GITIGNORE} not changed: {error.strerror}"
    return f"Added {name} to {GITIGNORE}."
