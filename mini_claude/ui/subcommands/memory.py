"""`mini-claude memory list|show|edit|rm|undo|path|projects`: the memory commands for the shell (no
API key needed). `edit`, `rm` and `undo` work as `/memory edit|rm|undo` do (`ui/commands/memory_actions.py`);
`rm` asks on a terminal, and without one deletes only with `--yes`; `undo` does not ask.

What they print comes from files anyone may have edited: it is made visible first. Results go to
stdout, problems to stderr (exit 1; 2 for a usage problem)."""

from __future__ import annotations

import sys

from mini_claude.core.config import Settings, memory_project_root, projects_dir
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import marked_lines, visible_text
from mini_claude.memory.listing import NO_MEMORIES, NameNotFound, list_lines, resolve, show_text
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.project_record import ProjectSummary, list_projects
from mini_claude.ui.commands.memory_actions import (
    delete_question,
    deleted_line,
    edit_memory,
    undo_last_change,
)

LIST_COMMAND = "mini-claude memory list"
COUNT_WIDTH = 5
EXIT_FAILED = 1
EXIT_USAGE = 2


def run_memory_command(settings: Settings, action: str, name: str | None = None, *, yes: bool = False) -> int:
    store = MemoryStore(settings.memory_dir)
    name = name or ""
    try:
        if action == "path":
            print(visible_path(str(store.root)))
        elif action == "list":
            _list(store, settings)
        elif action == "projects":
            return _projects(settings)
        elif action == "show":
            sys.stdout.write(marked_lines(show_text(store, resolve(store, name, list_command=LIST_COMMAND))))
        elif action == "edit":
            return _edit(store, name)
        elif action == "rm":
            return _remove(store, name, yes=yes)
        elif action == "undo":
            undone, lines = undo_last_change(store, None)
            print("\n".join(lines))
            return 0 if undone else EXIT_FAILED
        else:  # argparse allows only the actions above
            raise ValueError(f"unknown memory action {action!r}")
    except NameNotFound as error:
        return _fail(str(error))
    except MemoryStoreError as error:
        return _fail(f"memory: {error}")
    except BrokenPipeError:
        raise  # stdout closed (`| head`): not a file that could not be read
    except OSError as error:
        return _fail(f"cannot read {name}: {safe_read.describe(error)}")
    return 0


def _fail(text: str, status: int = EXIT_FAILED) -> int:
    print(f"mini-claude: {visible_text(text)}", file=sys.stderr)
    return status


def _list(store: MemoryStore, settings: Settings) -> None:
    store.use_saved_headers()
    lines = list_lines(store)
    store.save_headers()
    if lines == [NO_MEMORIES]:
        root = visible_path(str(memory_project_root(settings.project_dir)))
        lines = [f"No memories saved yet for {root} (looked in {visible_path(str(store.root))})."]
    print("\n".join(visible_text(line) for line in lines))


def _edit(store: MemoryStore, name: str) -> int:
    outcome = edit_memory(store, resolve(store, name, list_command=LIST_COMMAND))
    print("\n".join(outcome.lines), file=sys.stderr if outcome.failed else sys.stdout)
    return EXIT_FAILED if outcome.failed else 0


def _remove(store: MemoryStore, name: str, *, yes: bool) -> int:
    memory = resolve(store, name, list_command=LIST_COMMAND)
    if not yes:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            shown = visible_path(memory.file_name)
            return _fail(f"not deleting {shown}: no terminal to ask on; add --yes to delete it", EXIT_USAGE)
        sys.stderr.write(f"{delete_question(memory)} [y/N]: ")
        sys.stderr.flush()
        try:
            answer = sys.stdin.readline()
        except KeyboardInterrupt:
            answer = ""
            sys.stderr.write("\n")
        if answer.strip().lower() not in ("y", "yes"):
            print("Kept it.")
            return 0
    store.delete(memory)
    print(deleted_line(memory))
    return 0


def _projects(settings: Settings) -> int:
    """One line per project: memory files, folder, project path (or why it is not known)."""
    try:
        projects = list_projects(projects_dir())
    except FileNotFoundError:
        projects = []
    except OSError as error:
        return _fail(f"cannot list {visible_path(str(projects_dir()))}: {safe_read.describe(error)}")
    if not projects:
        print(f"No projects yet (looked in {visible_path(str(projects_dir()))}).")
        return 0
    here = settings.memory_dir.parent.name
    print("\n".join(project_line(project, current=project.folder.name == here) for project in projects))
    return 0


def project_line(project: ProjectSummary, *, current: bool = False) -> str:
    """`    3  1f0e…  /home/me/app`, then `  (this project)` or `  (no longer exists)`."""
    count = "-" if project.memories is None else str(project.memories)
    record = project.record
    if record.root is None:
        where, note = "?", f"  (unknown project: {visible_text(record.problem or '')})"
    else:
        where, note = visible_path(record.root), "" if project.root_exists else "  (no longer exists)"
    if current:
        note += "  (this project)"
    return f"{count:>{COUNT_WIDTH}}  {project.folder.name}  {where}{note}"
