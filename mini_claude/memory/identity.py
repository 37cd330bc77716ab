"""Memories belong to a project, not to a path: `project.json` records the repository's first
commits, and a different repository found at the same path (a deleted project's folder reused by a
new clone) does not get the old one's memories. One line says so; `mini-claude memory projects`
shows how to adopt them (they are this project's after all) or remove them.

Asked of git (memory/repository.py) off the start-up path, before anything reads the memories:
recall and the first system prompt wait for the memory start-up (memory/startup.py).
"""

from __future__ import annotations

import logging
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.config import GIT_MARKER, project_folder_name
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.memory import repository
from mini_claude.memory.project_record import ProjectSummary, read_record, record_project
from mini_claude.memory.store.memory_store import MemoryStore

log = logging.getLogger("mini_claude")

SHOWN_COMMIT_CHARS = 10


def settle(store: MemoryStore, root: Path) -> str | None:
    """At start-up: record which project (and repository) the store's folder is kept for, or,
    when another repository is at `root` now, withhold its memories (`store.withheld`) and
    return the line that says so. Only for a folder named after `root`'s hash (a memory folder
    set elsewhere belongs to no path)."""
    state_dir = store.root.parent
    if project_folder_name(str(root)) != state_dir.name:
        return None
    recorded = read_record(state_dir)
    if recorded.repository and another_repository(root, recorded.repository):
        line = prompts.notice(
            "memory_another_repository",
            root=visible_path(str(root)),
            commit=recorded.repository[0][:SHOWN_COMMIT_CHARS],
            folder=state_dir.name,
        )
        store.withheld = line.removeprefix("Memory: ")  # why its saves are refused, too
        return line
    commits = recorded.repository or tuple(repository.root_commits(root) or ())
    try:
        record_project(state_dir, root, commits)
    except OSError as error:  # costs only the listing, and the check next time
        log.warning("could not write %s: %s", state_dir, safe_read.describe(error))
    return None


def another_repository(root: Path, commits: tuple[str, ...]) -> bool:
    """Whether the folder at `root` is not the repository whose first commits are `commits`: it
    holds none of them, or is no repository at all. A shallow clone, which may lack them, is
    given the benefit of the doubt, and so is a repository git cannot read."""
    if not (root / GIT_MARKER).exists():
        return root.is_dir()  # the folder is there, and no repository: not the one recorded
    return repository.holds_any(root, commits) is False


def is_another_repository(project: ProjectSummary) -> bool:
    """For `mini-claude memory projects`: the project's path holds another repository now."""
    record = project.record
    return bool(record.root and record.repository and project.root_exists) and another_repository(
        Path(record.root or "/"), record.repository
    )


def adopt(state_dir: Path) -> str:
    """Make the folder's memories the current repository's at its recorded path: one line saying
    what was done. Raises OSError, or ValueError (one line) when the folder names no usable path."""
    record = read_record(state_dir)
    if record.root is None:
        raise ValueError(f"{state_dir.name} names no project it can be adopted for ({record.problem})")
    root = Path(record.root)
    commits = tuple(repository.root_commits(root) or ())
    record_project(state_dir, root, commits)
    return f"The memories in {state_dir.name} are {visible_path(str(root))}'s again."
