"""`/memory` and its actions: list, show, edit, rm, path, recalled."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit.completion import Completion

from mini_claude import safe_read
from mini_claude.errors import MemoryStoreError
from mini_claude.memory.listing import NameNotFound, list_lines, name_candidates, resolve, show_text
from mini_claude.paths import visible_path
from mini_claude.ui.commands import CommandContext, command
from mini_claude.untrusted import visible_text

if TYPE_CHECKING:
    from mini_claude.session import Session

DEFAULT_EDITORS = ("nano", "vi")
# The actions completion offers after `/memory `, with what each does (`list` is `/memory` alone).
ACTION_HELP = {
    "show": "print a memory",
    "edit": "open a memory in $VISUAL/$EDITOR",
    "rm": "delete a memory (asks first)",
    "path": "the memory directory",
    "recalled": "memories recalled this session",
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
    "List memories, or: show|edit|rm NAME, path, recalled",
    usage="[action]",
    complete=complete_memory_argument,
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
    memory = resolve(store, name)
    editor = (
        os.environ.get("VISUAL")
        or os.environ.get("EDITOR")
        or next((e for e in DEFAULT_EDITORS if shutil.which(e)), None)
    )
    if editor is None:
        _say(ctx, "No editor found: set $VISUAL or $EDITOR.")
        return
    before = _fingerprint(memory.path, store.root)
    try:
        status = subprocess.call([*shlex.split(editor), str(memory.path)])
    except OSError as error:
        _say(ctx, f"Could not start {editor!r}: {error.strerror}. Set $VISUAL or $EDITOR.")
        return
    if status != 0:
        _say(ctx, f"The editor exited with status {status}.")
    if before is not None and _fingerprint(memory.path, store.root) == before:
        _say(ctx, f"No changes to {visible_path(memory.file_name)}.")
        return
    store.rebuild_index()
    edited = next((m for m in store.scan() if m.file_name == memory.file_name), None)
    if edited is None:
        _say(ctx, f"{visible_path(memory.file_name)} is gone; the index was updated.")
    elif edited.problem:
        name, problem = visible_path(memory.file_name), visible_text(edited.problem)
        _say(ctx, f"{name} is now broken: {problem}. It stays out of the index until fixed.")
    else:
        _say(ctx, f"Saved {visible_path(memory.file_name)}; the index was updated.")


def _fingerprint(path: Path, root: Path) -> bytes | None:
    """A digest of the file, read in chunks (a huge one is never held whole, a FIFO never waited
    on); None when it cannot be read (then any outcome counts as a change)."""
    digest = hashlib.sha256()
    try:
        with safe_read.open_file(path, root) as (fd, _):
            while chunk := os.read(fd, safe_read.READ_CHUNK_BYTES):
                digest.update(chunk)
    except OSError:
        return None
    return digest.digest()


def _remove(ctx: CommandContext, name: str) -> None:
    store = ctx.session.store
    memory = resolve(store, name)
    if not ctx.confirm(f"Delete memory {memory.name!r} ({visible_path(memory.file_name)})?"):
        _say(ctx, "Kept it.")
        return
    store.delete(memory)
    _say(ctx, f"Deleted {visible_path(memory.file_name)}; the index was updated.")


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
}
