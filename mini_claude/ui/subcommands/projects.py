"""`mini-claude memory projects [adopt | remove [-y] FOLDER]`: every project folder mini-claude
keeps, with its memory count and project path; and what to do with the memories of a project
whose path now holds another repository (memory/identity.py): adopt them (they are this
repository's after all) or remove the folder (memories and saved sessions), asking first.

What it prints comes from files anyone may have edited: made visible first. Results go to stdout,
problems to stderr (exit 1; 2 for a usage problem)."""

from __future__ import annotations

import os
import shutil

from mini_claude.core.config import Settings, memory_project_root, project_folder_name, projects_dir
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import visible_text
from mini_claude.memory import identity
from mini_claude.memory.project_record import ProjectSummary, list_projects
from mini_claude.ui.subcommands.shell_io import EXIT_USAGE, can_ask, confirmed, fail

COUNT_WIDTH = 5


def run_projects_command(
    settings: Settings, deal: str | None, folder: str | None, *, yes: bool = False
) -> int:
    try:
        projects = list_projects(projects_dir())
    except FileNotFoundError:
        projects = []
    except OSError as error:
        return fail(f"cannot list {visible_path(str(projects_dir()))}: {safe_read.describe(error)}")
    if deal is None:
        return _list(settings, projects)
    chosen = _chosen(projects, folder or "")
    if chosen is None:
        return fail(f"no project folder {folder!r} (see mini-claude memory projects)")
    if deal == "adopt":
        try:
            print(visible_text(identity.adopt(chosen.folder)))
        except (OSError, ValueError) as error:
            reason = safe_read.describe(error) if isinstance(error, OSError) else str(error)
            return fail(f"not adopted: {reason}")
        return 0
    return _remove(chosen, yes=yes)


def _list(settings: Settings, projects: list[ProjectSummary]) -> int:
    if not projects:
        print(f"No projects yet (looked in {visible_path(str(projects_dir()))}).")
        return 0
    here = settings.memory_dir.parent.name
    lines = [project_line(project, current=project.folder.name == here) for project in projects]
    if any(identity.is_another_repository(project) for project in projects):
        lines.append(
            "A project marked `another repository` is kept for a path that holds another repository now: "
            "`mini-claude memory projects adopt FOLDER` makes its memories this repository's, "
            "`mini-claude memory projects remove FOLDER` deletes them (and its saved sessions)."
        )
    print("\n".join(lines))
    return 0


def project_line(project: ProjectSummary, *, current: bool = False) -> str:
    """`    3  1f0e…  /home/me/app`, then `  (this project)`, `  (no longer exists)` or
    `  (another repository now: its memories are not loaded)`."""
    count = "-" if project.memories is None else str(project.memories)
    record = project.record
    if record.root is None:
        where, note = "?", f"  (unknown project: {visible_text(record.problem or '')})"
    else:
        where, note = visible_path(record.root), "" if project.root_exists else "  (no longer exists)"
        if identity.is_another_repository(project):
            note += "  (another repository now: its memories are not loaded)"
    if current:
        note += "  (this project)"
    return f"{count:>{COUNT_WIDTH}}  {project.folder.name}  {where}{note}"


def _chosen(projects: list[ProjectSummary], given: str) -> ProjectSummary | None:
    """The project `given` names: its folder's name, or its path (as a session there would key it)."""
    names = {given, project_folder_name(str(memory_project_root(given))) if os.path.isdir(given) else ""}
    names.add(project_folder_name(os.path.normpath(os.path.abspath(given))))
    return next((p for p in projects if p.folder.name in names), None)


def _remove(project: ProjectSummary, *, yes: bool) -> int:
    shown = f"{project.folder.name} ({visible_path(project.record.root or '?')})"
    if not yes:
        if not can_ask():
            return fail(f"not removing {shown}: no terminal to ask on; add --yes to remove it", EXIT_USAGE)
        if not confirmed(f"Remove {shown}: its {project.memories or 0} memories and saved sessions?"):
            print("Kept it.")
            return 0
    try:
        shutil.rmtree(project.folder)  # never through a symlink: rmtree refuses one
    except OSError as error:
        return fail(f"could not remove {shown}: {safe_read.describe(error)}")
    print(f"Removed {shown}.")
    return 0
