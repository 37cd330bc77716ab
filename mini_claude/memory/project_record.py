"""`project.json` in each project's folder (`~/.mini-claude/projects/<hash>/`): which project the
folder is kept for, since its name, a hash of the project's path, cannot be read back; and, for a
git repository, which one (its first commits: memory/identity.py compares them at each start).

A session writes it as it starts (memory/identity.py: atomically, and only when it is missing or
says something else: the truth is known then, the folder's name being the hash of that session's
project root).
Reading it trusts nothing: a record that is not small, strict JSON naming an absolute path whose
hash is the folder's name is reported with the reason, and no path is taken from it.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core.config import (
    MEMORY_FOLDER,
    PROJECT_HASH_CHARS,
    Settings,
    memory_project_root,
    project_folder_name,
)
from mini_claude.core.files import safe_read, strict_json
from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.files.private_files import FILE_MODE, make_private
from mini_claude.core.paths import visible_path
from mini_claude.memory.repository import ROOT_COMMITS_MAX
from mini_claude.memory.store.headers import stat_memory_files
from mini_claude.memory.store.memory_folder import escape_problem

log = logging.getLogger("mini_claude")

RECORD_FILE = "project.json"
RECORD_MAX_BYTES = 64_000  # a path and a version: anything near this size was not written by us
RECORD_VERSION = 2  # 1 had no repository
RECORD_MODE = FILE_MODE
_HASH_NAME = re.compile(f"[0-9a-f]{{{PROJECT_HASH_CHARS}}}")
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class ProjectRecord:
    root: str | None  # the project's path; None when the record is missing or not to be trusted
    problem: str | None = None  # why there is no root, in one line
    repository: tuple[str, ...] = ()  # the first commits of the repository it was kept for


def record_text(root: Path, repository: tuple[str, ...] = ()) -> str:
    # ASCII only: a path that is not UTF-8 (surrogate escapes) survives as \\udcXX escapes.
    value: dict[str, object] = {"version": RECORD_VERSION, "root": str(root)}
    if repository:
        value["repository"] = list(repository)
    return json.dumps(value, indent=2) + "\n"


def remember_project(settings: Settings) -> None:
    """At the start of a session without automatic memory (whose start-up, memory/identity.py,
    does this with the repository's commits): the project folder says whose it is. Only for a
    folder named after the project's hash (a memory folder set elsewhere is not one); a failure
    costs only the listing."""
    state_dir, root = settings.memory_dir.parent, memory_project_root(settings.project_dir)
    if project_folder_name(str(root)) != state_dir.name:
        return
    try:
        record_project(state_dir, root)
    except OSError as error:
        log.warning("could not write %s: %s", state_dir / RECORD_FILE, safe_read.describe(error))


def record_project(state_dir: Path, root: Path, repository: tuple[str, ...] | None = None) -> bool:
    """Make `state_dir/project.json` name `root` (and `repository`'s first commits; None keeps
    those recorded), readable by its owner only (it names where the user works, like the
    transcripts beside it); True when it was (re)written. Raises OSError."""
    found = read_record(state_dir)
    repository = found.repository if repository is None else repository
    if found.root == str(root) and found.repository == repository and _made_private(state_dir / RECORD_FILE):
        return False
    write_atomic(state_dir / RECORD_FILE, record_text(root, repository), mode=RECORD_MODE)  # folders 0700
    return True


def _made_private(path: Path) -> bool:
    """Narrow a record a version left as the umask did; False when it cannot be (a hard link,
    whose mode is another name's too: the record is written anew, which breaks the link)."""
    try:
        make_private(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, RECORD_MODE)
    except OSError:
        return False
    return True


def read_record(state_dir: Path) -> ProjectRecord:
    """What `state_dir/project.json` says, checked: never raises."""
    path = state_dir / RECORD_FILE
    try:
        found = safe_read.read_bytes(path, state_dir, RECORD_MAX_BYTES, follow_symlink=False, owner_only=True)
    except FileNotFoundError:
        return ProjectRecord(None, f"no {RECORD_FILE} (not used since mini-claude began keeping one)")
    except OSError as error:
        return ProjectRecord(None, safe_read.describe(error))
    if found.was_cut:
        return ProjectRecord(None, f"{RECORD_FILE} is over {safe_read.format_size(RECORD_MAX_BYTES)}")
    try:
        data = strict_json.loads(found.data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        return ProjectRecord(None, f"{RECORD_FILE} is not valid JSON ({type(error).__name__})")
    root = data.get("root") if isinstance(data, dict) else None
    if not isinstance(root, str) or not root:
        return ProjectRecord(None, f"{RECORD_FILE} names no project root")
    if "\0" in root or not os.path.isabs(root) or os.path.normpath(root) != root:
        return ProjectRecord(None, f"{RECORD_FILE} names {visible_path(root)}, not an absolute, normal path")
    if project_folder_name(root) != state_dir.name:
        # Copied from another project's folder, or edited: its path would be kept elsewhere.
        return ProjectRecord(None, f"{RECORD_FILE} names {visible_path(root)}, whose folder is another")
    commits = data.get("repository", [])
    if not (isinstance(commits, list) and all(isinstance(c, str) and _COMMIT.fullmatch(c) for c in commits)):
        return ProjectRecord(None, f"{RECORD_FILE} names a repository that is no list of commits")
    return ProjectRecord(root, repository=tuple(commits[:ROOT_COMMITS_MAX]))


@dataclass(frozen=True)
class ProjectSummary:
    folder: Path
    record: ProjectRecord
    memories: int | None  # memory files in its memory folder; None when that folder is not used
    root_exists: bool


def list_projects(projects: Path) -> list[ProjectSummary]:
    """Every project folder under `projects` (real folders named like a project hash), sorted by
    project path, the unknown ones last. Raises OSError when `projects` cannot be listed."""
    found = []
    with os.scandir(projects) as entries:
        for entry in entries:
            if not _HASH_NAME.fullmatch(entry.name) or not entry.is_dir(follow_symlinks=False):
                continue  # not one of ours: a symlink here is not followed into somewhere else
            folder = Path(entry.path)
            record = read_record(folder)
            memory_dir = folder / MEMORY_FOLDER
            memories = None if escape_problem(memory_dir) else len(stat_memory_files(memory_dir))
            exists = record.root is not None and os.path.isdir(record.root)
            found.append(ProjectSummary(folder, record, memories, exists))
    found.sort(key=lambda p: (p.record.root is None, p.record.root or "", p.folder.name))
    return found
