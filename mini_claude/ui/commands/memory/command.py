"""`/memory` and its actions: list, show, edit, rm, promote, demote, share, path, recalled, search,
undo (tidy: tidy.py)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import Completion

from mini_claude.core.config import Settings
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import marked_lines, marked_text, visible_text
from mini_claude.memory.listing import (
    NameNotFound,
    about_lines,
    list_lines,
    name_candidates,
    resolve,
    show_text,
)
from mini_claude.memory.moves import move
from mini_claude.memory.recall.search import hit_lines, search_memories
from mini_claude.memory.recall.terms import terms
from mini_claude.ui.commands.memory.actions import (
    delete_question,
    deleted_line,
    edit_memory,
    undo_last_change,
)
from mini_claude.ui.commands.memory.tidy import tidy_action
from mini_claude.ui.commands.registry import CommandContext, command
from mini_claude.ui.commands.status import instruction_lines

if TYPE_CHECKING:
    from mini_claude.app.session import Session

# The actions completion offers after `/memory `, with what each does (`list` is `/memory` alone).
ACTION_HELP = {
    "show": "print a memory, who wrote it and when",
    "edit": "open a memory in $VISUAL/$EDITOR",
    "rm": "delete a memory (asks first)",
    "promote": "move one of this project's memories to yours, in every project",
    "demote": "move one of yours (or the team's) to this project's",
    "share": "move a memory to the team's folder in the repository (to be committed)",
    "path": "the memory directory",
    "recalled": "memories recalled this session",
    "search": "memories matching words, best first, as recall ranks them",
    "tidy": "review the memories with the model: merge, fix, date, add (asks first)",
    "undo": "undo the last change: a tidy, an rm, a save, a move",
}
NAMED_ACTIONS = ("show", "edit", "rm", "promote", "demote", "share")
MEMORY_HELP = (
    "List memories, or: show|edit|rm|promote|demote|share NAME, path, recalled, search QUERY,"
    " tidy [FOCUS], undo"
)


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
    for text, description in name_candidates(session.memories, typed):
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
        actions = ", ".join(name for name in _ACTIONS if name != "list")
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
    lines = [*list_lines(ctx.session.memories), *memory_notes(ctx.session)]
    _say(ctx, "\n".join([*instruction_lines(ctx.session.instructions()), "", *lines]))


def memory_notes(session: Session) -> list[str]:
    """What `/memory` adds below the list: automatic memory off or asking, team memories not
    loaded, memories withheld (another repository at the project's path)."""
    notes, mode = [], session.settings.memory_mode
    if mode == "off":
        off_by = _off_by(session.settings)
        notes.append(f"Automatic memory is off ({off_by}): nothing is recalled, the model saves nothing.")
    elif mode == "ask":
        notes.append("Every save the model makes asks you first (MINI_CLAUDE_MEMORY=ask).")
    return notes + unused_memory_notes(session)


def unused_memory_notes(session: Session) -> list[str]:
    """Memories there are but not used (so neither listed nor searched): the team's in a folder
    not trusted, the project's withheld (another repository at its path)."""
    notes = []
    if unloaded := session.memories.unloaded_team_memories():
        notes.append(
            f"{unloaded} team memories in the repository are not loaded: this folder is not trusted."
        )
    if (withheld := session.store.withheld) is not None:
        notes.append(visible_text(withheld))
    return notes


def _off_by(settings: Settings) -> str:
    """What turned memory off: the environment variable, else a settings file's autoMemoryEnabled."""
    origin = settings.origins.get("memory_enabled", "MINI_CLAUDE_MEMORY")
    if origin.startswith("MINI_CLAUDE_MEMORY") or origin == "default":
        return "MINI_CLAUDE_MEMORY=off" + origin.removeprefix("MINI_CLAUDE_MEMORY")
    return f"autoMemoryEnabled: false in {visible_text(origin)}"


def _show(ctx: CommandContext, name: str) -> None:
    memories = ctx.session.memories
    memory = resolve(memories, name)
    body = marked_lines(show_text(memories, memory).rstrip())
    _say(ctx, "\n".join([*about_lines(memories, memory), "", body]))


def _edit(ctx: CommandContext, name: str) -> None:
    memories = ctx.session.memories
    memory = resolve(memories, name)
    for line in edit_memory(memories.store_of(memory), memory).lines:
        _say(ctx, line)


def _remove(ctx: CommandContext, name: str) -> None:
    memories = ctx.session.memories
    memory = resolve(memories, name)
    if not ctx.confirm(delete_question(memory)):
        _say(ctx, "Kept it.")
        return
    memories.store_of(memory).delete(memory)  # kept in the trash: undo brings it back
    _say(ctx, deleted_line(memory))


def _move(action: str) -> Callable[[CommandContext, str], None]:
    def moving(ctx: CommandContext, name: str) -> None:
        memories = ctx.session.memories
        _say(ctx, "\n".join(move(memories, resolve(memories, name), action).lines))

    return moving


def _undo(ctx: CommandContext, name: str) -> None:
    _say(ctx, "\n".join(undo_last_change(ctx.session.memories, ctx.confirm)[1]))


def _path(ctx: CommandContext, name: str) -> None:
    _say(ctx, str(ctx.session.store.root))  # the project's: where the model saves by default


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
    """`/memory search QUERY`: as `mini-claude memory search`, over the scopes this session uses."""
    memories = ctx.session.memories
    if not terms(query):
        what = "has no word to search for (words like 'the' or 'how' are skipped)" if query else "needs words"
        _say(ctx, f"/memory search {what}: /memory search QUERY.")
        return
    if not memories.has_memories():
        lines = ["No memories saved yet."]
    elif hits := search_memories(memories, query):
        lines = [line for hit in hits for line in hit_lines(hit)]
    else:
        lines = [f"No memory matches {visible_text(repr(query))}."]
    _say(ctx, "\n".join(lines + unused_memory_notes(ctx.session)))


_ACTIONS = {
    "list": _list,
    "show": _show,
    "edit": _edit,
    "rm": _remove,
    "promote": _move("promote"),
    "demote": _move("demote"),
    "share": _move("share"),
    "path": _path,
    "recalled": _recalled,
    "search": _search,
    "tidy": tidy_action,
    "undo": _undo,
}
