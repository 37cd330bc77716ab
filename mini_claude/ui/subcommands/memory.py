"""`mini-claude memory list|show|edit|rm|promote|demote|share|undo|path|search`: the memory commands
for the shell (no API key needed), over every scope (as `/memory`; `memory projects` is
ui/subcommands/projects.py).
`edit`, `rm` and `undo` work as `/memory edit|rm|undo` do (`ui/commands/memory/actions.py`); `rm` asks
on a terminal, and without one deletes only with `--yes`; `undo` does not ask. `show` prints the
file on stdout and what is known of it (its scope, who wrote it) on stderr.

What they print comes from files anyone may have edited: it is made visible first. Results go to
stdout, problems to stderr (exit 1; 2 for a usage problem)."""

from __future__ import annotations

import sys

from mini_claude.core.config import Settings, memory_project_root
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import marked_lines, visible_text
from mini_claude.memory import identity
from mini_claude.memory.listing import NO_MEMORIES, NameNotFound, about_lines, list_lines, resolve, show_text
from mini_claude.memory.moves import TARGETS, move
from mini_claude.memory.recall.search import DEFAULT_LIMIT, hit_json, hit_lines, search_memories
from mini_claude.memory.recall.terms import terms
from mini_claude.memory.scopes import MemoryScopes
from mini_claude.ui.commands.memory.actions import (
    delete_question,
    deleted_line,
    edit_memory,
    undo_last_change,
)
from mini_claude.ui.print.json_output import json_line
from mini_claude.ui.subcommands.shell_io import EXIT_FAILED, EXIT_USAGE, can_ask, confirmed, fail

LIST_COMMAND = "mini-claude memory list"
_NO_QUERY = "memory search: give the words to search for: mini-claude memory search QUERY"
_NO_SEARCH_TERM = "memory search: the query has no word to search for (words like 'the' or 'how' are skipped)"


def run_memory_command(settings: Settings, action: str, name: str | None = None, *, yes: bool = False) -> int:
    """`mini-claude memory ACTION`: the team's memories are used in a trusted folder only."""
    memories = MemoryScopes.for_settings(settings)
    store, name = memories.project, name or ""
    try:
        if action == "path":
            print(visible_path(str(store.root)))
            return 0
        _settle(memories)
        if action == "list":
            _list(memories, settings)
        elif action == "show":
            memory = resolve(memories, name, list_command=LIST_COMMAND)
            print("\n".join(visible_text(line) for line in about_lines(memories, memory)), file=sys.stderr)
            sys.stdout.write(marked_lines(show_text(memories, memory)))
        elif action == "edit":
            return _edit(memories, name)
        elif action == "rm":
            return _remove(memories, name, yes=yes)
        elif action in TARGETS:
            print("\n".join(move(memories, resolve(memories, name, list_command=LIST_COMMAND), action).lines))
        else:  # undo: argparse allows only the actions above
            undone, lines = undo_last_change(memories, None)
            print("\n".join(lines))
            return 0 if undone else EXIT_FAILED
    except NameNotFound as error:
        return fail(str(error))
    except MemoryStoreError as error:
        return fail(f"memory: {error}")
    except BrokenPipeError:
        raise  # stdout closed (`| head`): not a file that could not be read
    except OSError as error:
        return fail(f"cannot read {name}: {safe_read.describe(error)}")
    return 0


def run_search_command(settings: Settings, query: str, limit: str | None, *, as_json: bool = False) -> int:
    """`memory search QUERY [--limit N] [--json]`: matching memories of every scope in use, best
    first. A query with no search term, a bad --limit (exit 2) and no memories (exit 1) are one
    line each; what `memory list` says of withheld or unloaded memories goes to stderr."""
    count = DEFAULT_LIMIT if limit is None else _limit(limit)
    if count is None:
        return fail(f"memory search: --limit takes a whole number of at least 1, not {limit!r}", EXIT_USAGE)
    if not terms(query):
        return fail(_NO_SEARCH_TERM if query.strip() else _NO_QUERY, EXIT_USAGE)
    memories = MemoryScopes.for_settings(settings)
    _settle(memories)
    if unloaded := memories.unloaded_team_memories():
        print(_unloaded_line(unloaded), file=sys.stderr)
    if not memories.has_memories():
        root = visible_path(str(memory_project_root(settings.project_dir)))
        looked = ", ".join(visible_path(str(store.root)) for store in memories.stores())
        return fail(f"no memories to search for {root} (looked in {looked or 'no folder that can be used'})")
    hits = search_memories(memories, query, count)
    if as_json:
        print(json_line([hit_json(hit) for hit in hits]))
    elif hits:
        print("\n".join(line for hit in hits for line in hit_lines(hit)))
    else:
        print(visible_text(f"No memory matches {query!r}."))
    return 0


def _settle(memories: MemoryScopes) -> None:
    """Whose memories these are: those of another repository at the project's path are withheld,
    which one line on stderr says (as a session's start-up does)."""
    if memories.project_root is not None and (
        withheld := identity.settle(memories.project, memories.project_root)
    ):
        print(visible_text(withheld), file=sys.stderr)


def _limit(text: str) -> int | None:
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= 1 else None


def _list(memories: MemoryScopes, settings: Settings) -> None:
    store = memories.project
    store.headers.use_saved()  # read once here: the headers an earlier listing saved
    lines = list_lines(memories)
    store.headers.save()
    if unloaded := memories.unloaded_team_memories():
        lines.append(_unloaded_line(unloaded))
    if lines == [NO_MEMORIES]:
        root = visible_path(str(memory_project_root(settings.project_dir)))
        lines = [f"No memories saved yet for {root} (looked in {visible_path(str(store.root))})."]
    print("\n".join(visible_text(line) for line in lines))


def _unloaded_line(count: int) -> str:
    return f"({count} team memories in the repository are not loaded: this folder is not trusted.)"


def _edit(memories: MemoryScopes, name: str) -> int:
    memory = resolve(memories, name, list_command=LIST_COMMAND)
    outcome = edit_memory(memories.store_of(memory), memory)
    print("\n".join(outcome.lines), file=sys.stderr if outcome.failed else sys.stdout)
    return EXIT_FAILED if outcome.failed else 0


def _remove(memories: MemoryScopes, name: str, *, yes: bool) -> int:
    memory = resolve(memories, name, list_command=LIST_COMMAND)
    if not yes:
        if not can_ask():
            shown = visible_path(memory.file_name)
            return fail(f"not deleting {shown}: no terminal to ask on; add --yes to delete it", EXIT_USAGE)
        if not confirmed(delete_question(memory)):
            print("Kept it.")
            return 0
    memories.store_of(memory).delete(memory)  # kept in the trash: undo brings it back
    print(deleted_line(memory))
    return 0
