"""`/memory` and its actions: list, show, edit, rm, path, recalled."""

from __future__ import annotations

import datetime as dt
import os
import shlex
import shutil
import subprocess

from mini_claude.memory.listing import NameNotFound, list_lines, resolve, show_text
from mini_claude.memory.store import MemoryStoreError
from mini_claude.ui.commands import CommandContext, command

DEFAULT_EDITORS = ("nano", "vi")


def _say(ctx: CommandContext, text: str) -> None:
    ctx.console.print(text, markup=False, highlight=False)


@command(
    "memory", "List memories; show|edit|rm NAME, path, recalled", usage="[show|edit|rm NAME|path|recalled]"
)
def _memory(ctx: CommandContext, argument: str) -> None:
    action, _, name = argument.partition(" ")
    action, name = action.lower(), name.strip()
    handler = _ACTIONS.get(action or "list")
    if handler is None:
        _say(ctx, f"Unknown /memory action {action!r}: use show, edit, rm, path or recalled.")
        return
    try:
        handler(ctx, name)
    except NameNotFound as error:
        _say(ctx, str(error))
    except (MemoryStoreError, OSError) as error:
        _say(ctx, f"Memory: {error}")


def _list(ctx: CommandContext, name: str) -> None:
    _say(ctx, "\n".join(list_lines(ctx.session.store)))


def _show(ctx: CommandContext, name: str) -> None:
    store = ctx.session.store
    memory = resolve(store, name)
    _say(ctx, f"{memory.path}\n{show_text(store, memory).rstrip()}")


def _edit(ctx: CommandContext, name: str) -> None:
    store = ctx.session.store
    memory = resolve(store, name)
    editor = (
        os.environ.get("VISUAL")
        or os.environ.get("EDITOR")
        or next((e for e in DEFAULT_EDITORS if shutil.which(e)), None)
    )
    if editor is None:
        _say(ctx, "No editor found: set $VISUAL or $EDITOR.")
        return
    try:
        status = subprocess.call([*shlex.split(editor), str(memory.path)])
    except OSError as error:
        _say(ctx, f"Could not start {editor!r}: {error.strerror}. Set $VISUAL or $EDITOR.")
        return
    store.rebuild_index()
    edited = next((m for m in store.scan() if m.file_name == memory.file_name), None)
    if status != 0:
        _say(ctx, f"The editor exited with status {status}.")
    if edited is None:
        _say(ctx, f"{memory.file_name} is gone; the index was updated.")
    elif edited.problem:
        _say(
            ctx, f"{memory.file_name} is now broken: {edited.problem}. It stays out of the index until fixed."
        )
    else:
        _say(ctx, f"Saved {memory.file_name}; the index was updated.")


def _remove(ctx: CommandContext, name: str) -> None:
    store = ctx.session.store
    memory = resolve(store, name)
    if not ctx.confirm(f"Delete memory {memory.name!r} ({memory.file_name})?"):
        _say(ctx, "Kept it.")
        return
    store.delete(memory)
    _say(ctx, f"Deleted {memory.file_name}; the index was updated.")


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
        lines.append(f"{when}  {', '.join(record.file_names)}  (for: {record.query[:60]!r})")
    _say(ctx, "\n".join(lines))


_ACTIONS = {
    "list": _list,
    "show": _show,
    "edit": _edit,
    "rm": _remove,
    "path": _path,
    "recalled": _recalled,
}
