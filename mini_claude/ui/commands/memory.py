"""`/memory` and its actions: list, show, edit, rm, path, recalled."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import Completion

from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import marked_lines, marked_text, visible_text
from mini_claude.memory.listing import NameNotFound, list_lines, name_candidates, resolve, show_text
from mini_claude.ui.commands.memory_actions import (
    delete_question,
    deleted_line,
    edit_memory,
    undo_last_change,
)
from mini_claude.ui.commands.registry import CommandContext, command
from mini_claude.ui.commands.status import instruction_lines
from mini_claude.ui.commands.tidy import tidy_action

if TYPE_CHECKING:
    from mini_claude.app.session import Session

# The actions completion offers after `/memory `, with what each does (`list` is `/memory` alone).
ACTION_HELP = {
    "show": "print a memory",
    "edit": "open a memory in $VISUAL/$EDITOR",
    "rm": "delete a memory (asks first)",
    "path": "the memory directory",
    "recalled": "memories recalled this session",
    "tidy": "review the memories with the model: merge, fix, date, add (asks first)",
    "undo": "undo the last change: a tidy, an rm, an update of a memory",
}
NAMED_ACTIONS = ("show", "edit", "rm")
MEMORY_HELP = "List memories, or: show|edit|rm NAME, path, recalled, tidy [FOCUS], undo"


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
            display=marked_text(text),
            display_meta=marked_text(description),
        )


@command("memory", MEMORY_HELP, usage="[action]", complete=complete_memory_argument)
def _memory(ctx: CommandContext, argument: str) -> None:
    action, _, name = argument.partition(" ")
    action, name = action.lower(), name.strip()
    handler = _ACTIONS.get(action or "list")
    if handler is None:
        _say(ctx, f"Unknown /memory action {action!r}: use show, edit, rm, path, recalled, tidy or undo.")
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
    memories = list_lines(ctx.session.store)
    if not ctx.session.settings.memory_enabled:
        memories = [
            "Automatic memory is off (autoMemoryEnabled, MINI_CLAUDE_MEMORY): nothing is recalled or saved.",
            *memories,
        ]
    _say(ctx, "\n".join([*instruction_lines(ctx.session.instructions()), "", *memories]))


def _show(ctx: CommandContext, name: str) -> None:
    store = ctx.session.store
    memory = resolve(store, name)
    _say(ctx, f"{visible_path(str(memory.path))}\n{marked_lines(show_text(store, memory).rstrip())}")


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


def _undo(ctx: CommandContext, name: str) -> None:
    _say(ctx, "\n".join(undo_last_change(ctx.session.store, ctx.confirm)[1]))


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


_ACTIONS = {
    "list": _list,
    "show": _show,
    "edit": _edit,
    "rm": _remove,
    "path": _path,
    "recalled": _recalled,
    "tidy": tidy_action,
    "undo": _undo,
}
