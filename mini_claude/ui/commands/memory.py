"""`/memory` and its actions: list, show, edit, rm, path, recalled, search (tidy and undo: tidy.py)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import Completion

from mini_claude.core import safe_read
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import visible_text
from mini_claude.memory.listing import NameNotFound, list_lines, name_candidates, resolve, show_text
from mini_claude.memory.recall.search import MemoryFolder, hit_lines, search_memories
from mini_claude.memory.recall.terms import terms
from mini_claude.ui.commands.memory_actions import delete_question, deleted_line, edit_memory
from mini_claude.ui.commands.registry import CommandContext, command
from mini_claude.ui.commands.tidy import tidy_action, undo_action

if TYPE_CHECKING:
    from mini_claude.app.session import Session

# The actions completion offers after `/memory `, with what each does (`list` is `/memory` alone).
ACTION_HELP = {
    "show": "print a memory",
    "edit": "open a memory in $VISUAL/$EDITOR",
    "rm": "delete a memory (asks first)",
    "path": "the memory directory",
    "recalled": "memories recalled this session",
    "search": "memories matching words, best first, as recall ranks them",
    "tidy": "review the memories with the model: merge, fix, date, add (asks first)",
    "undo": "undo the last tidy",
}
NAMED_ACTIONS = ("show", "edit", "rm")


def _say(ctx: CommandContext, text: str) -> None:
    # The console makes the text visible (VisibleConsole); file names are quoted where they are
    # put in, so that a line break in one cannot fake a line of output.
    ctx.console.print(text, markup=False, highlight=False)


def complete_memory_argument(session: Session, argument: str) -> Iterator[Completion]:
    """After `/memory `: its actions; after `/memory show|edit|rm `: the memories' names."""
    argument = argument.lstrip()
    action, space, typed = argument.partition(" ")
    if not space:
        for name, description in ACTION_HELP.items():
            if name.startswith(action.lower()):
                yield Completion(name, start_position=-len(action), display_meta=description)
        return
    if action.lower() not in NAMED_ACTIONS:
        return
    for text, description in name_candidates(session.store, typed):
        # Inserted as the name is (so it resolves), displayed made visible.
        yield Completion(
            text,
            start_position=-len(typed),
            display=visible_text(text),
            display_meta=visible_text(description),
        )


@command(
    "memory",
    "List memories, or: show|edit|rm NAME, path, recalled, search QUERY, tidy [FOCUS], undo",
    usage="[action]",
    complete=complete_memory_argument,
)
def _memory(ctx: CommandContext, argument: str) -> None:
    action, _, name = argument.partition(" ")
    action, name = action.lower(), name.strip()
    handler = _ACTIONS.get(action or "list")
    if handler is None:
        actions = ", ".join(action for action in _ACTIONS if action != "list")
        _say(ctx, f"Unknown /memory action {action!r}: use {actions}.")
        return
    try:
        handler(ctx, name)
    except NameNotFound as error:
        _say(ctx, visible_text(str(error)))
    except MemoryStoreError as error:
        _say(ctx, f"Memory: {visible_text(str(error))}")
    except OSError as error:
        _say(ctx, f"Memory: {visible_text(safe_read.describe(error))}")


def _list(ctx: CommandContext, name: str) -> None:
    _say(ctx, "\n".join(list_lines(ctx.session.store)))


def _show(ctx: CommandContext, name: str) -> None:
    store = ctx.session.store
    memory = resolve(store, name)
    _say(ctx, f"{visible_path(str(memory.path))}\n{show_text(store, memory).rstrip()}")


def _edit(ctx: CommandContext, name: str) -> None:
    store = ctx.session.store
    for line in edit_memory(store, resolve(store, name)).lines:
        _say(ctx, line)


def _remove(ctx: CommandContext, name: str) -> None:
    store = ctx.session.store
    memory = resolve(store, name)
    if not ctx.confirm(delete_question(memory)):
        _say(ctx, "Kept it.")
        return
    store.delete(memory)
    _say(ctx, deleted_line(memory))


def _path(ctx: CommandContext, name: str) -> None:
    _say(ctx, str(ctx.session.store.root))


def _recalled(ctx: CommandContext, name: str) -> None:
    history = ctx.session.recall.history
    if not history:
        _say(ctx, "No memories recalled in this session yet.")
        return
    lines = []
    for record in history:
        when = dt.datetime.fromtimestamp(record.at).strftime("%H:%M:%S")
        names = ", ".join(visible_path(name) for name in record.file_names)
        lines.append(f"{when}  {names}  (for: {record.query[:60]!r})")
    _say(ctx, "\n".join(lines))


def _search(ctx: CommandContext, query: str) -> None:
    store = ctx.session.store
    if not terms(query):
        what = "has no word to search for (words like 'the' or 'how' are skipped)" if query else "needs words"
        _say(ctx, f"/memory search {what}: /memory search QUERY.")
        return
    if not store.has_memories():
        _say(ctx, "No memories saved yet.")
        return
    hits = search_memories([MemoryFolder("project", store)], query)
    if not hits:
        _say(ctx, f"No memory matches {visible_text(repr(query))}.")
        return
    _say(ctx, "\n".join(line for hit in hits for line in hit_lines(hit)))


_ACTIONS = {
    "list": _list,
    "show": _show,
    "edit": _edit,
    "rm": _remove,
    "path": _path,
    "recalled": _recalled,
    "search": _search,
    "tidy": tidy_action,
    "undo": undo_action,
}
