"""Where the settings files are, and reading one: JSON in Claude Code's format, most general
first (a later file wins a key it sets):

    ~/.claude/settings.json, ~/.mini-claude/settings.json                    user
    <root>/.claude/settings.json, <root>/.mini-claude/settings.json          project (committed)
    <root>/.claude/settings.local.json, <root>/.mini-claude/settings.local.json   local (personal)
    --settings FILE (or a JSON object given as the flag's value)             flag

`<root>` is the top of the git work tree (else the working directory). A file is read as every
start-up file is: a regular file (a FIFO or a device is skipped, never waited on), at most
SETTINGS_MAX_BYTES, symlinks followed only within the project (the user's own, within home).
Invalid JSON names the file, line and column; that file is skipped and the others still count.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.app.instructions.reading import shown_path
from mini_claude.core.config import app_home
from mini_claude.core.config_sources import Scope
from mini_claude.core.files import safe_read, strict_json
from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.files.private_files import foreign_entry, private_place
from mini_claude.core.paths import visible_path

SETTINGS_MAX_BYTES = 1_000_000
SETTINGS_FILE = "settings.json"
LOCAL_SETTINGS_FILE = "settings.local.json"
CLAUDE_FOLDER = ".claude"
OWN_FOLDER = ".mini-claude"
MAX_NESTING = 64  # of JSON objects and arrays: far beyond any real settings file


class SettingsError(Exception):
    """Why a settings file was not used, in one line naming it."""


@dataclass(frozen=True)
class SettingsFile:
    path: Path  # as found
    scope: Scope
    data: dict[str, Any]  # the file's JSON object
    shown: str  # how the user is shown the file: ~/.claude/settings.json, .claude/settings.json


def settings_locations(root: Path, home: Path) -> list[tuple[Path, Scope]]:
    """Each settings file's place and scope, most general first (see the module doc)."""
    return [
        (home / CLAUDE_FOLDER / SETTINGS_FILE, "user"),
        (app_home() / SETTINGS_FILE, "user"),
        (root / CLAUDE_FOLDER / SETTINGS_FILE, "project"),
        (root / OWN_FOLDER / SETTINGS_FILE, "project"),
        (root / CLAUDE_FOLDER / LOCAL_SETTINGS_FILE, "local"),
        (root / OWN_FOLDER / LOCAL_SETTINGS_FILE, "local"),
    ]


def read_settings_file(path: Path, scope: Scope, root: Path) -> SettingsFile | None:
    """The file's JSON object; None when there is no file; SettingsError when it cannot be used."""
    shown = shown_setting_path(path, root)
    within = Path("/") if scope == "user" else root  # the user's own may lead anywhere (stow, nix)
    if (private_place(path.parent) or private_place(path)) and (foreign := foreign_entry(path)):
        raise SettingsError(f"{shown}: skipped: {foreign}")  # it may have been swapped in
    try:
        found = safe_read.read_bytes(path, within, SETTINGS_MAX_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise SettingsError(f"{shown}: skipped: {safe_read.describe(error)}") from None
    if found.was_cut:
        size, limit = safe_read.format_size(found.size), safe_read.format_size(SETTINGS_MAX_BYTES)
        raise SettingsError(f"{shown}: skipped: it is {size}, over the {limit} a settings file may be")
    return SettingsFile(path, scope, parse_settings(found.data, shown), shown)


def parse_settings(data: bytes, shown: str) -> dict[str, Any]:
    """`data` as a settings object; SettingsError naming `shown` (and the line and column)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SettingsError(f"{shown}: skipped: it is not UTF-8 text") from None
    try:
        value = strict_json.loads(text)
    except json.JSONDecodeError as error:
        raise SettingsError(
            f"{shown}: invalid JSON at line {error.lineno}, column {error.colno} ({error.msg}): skipped"
        ) from None
    except (ValueError, RecursionError) as error:
        raise SettingsError(f"{shown}: invalid JSON ({error}): skipped") from None
    if not isinstance(value, dict):
        raise SettingsError(f"{shown}: skipped: it holds a JSON {_kind(value)}, not an object of settings")
    if strict_json.nesting_depth(value) > MAX_NESTING:
        raise SettingsError(f"{shown}: skipped: nested more than {MAX_NESTING} levels deep")
    return value


@contextlib.contextmanager
def changed_json(
    path: Path, read: Callable[[], dict[str, Any]], mode: int | None
) -> Iterator[dict[str, Any]]:
    """`read()`'s object to change in the block, written back atomically (every key it does not
    touch kept) when the block ends without an error and changed it. The folder holding `path` is
    locked meanwhile, which leaves no lock file in a repository: two sessions changing the file
    at once both keep their change. OSError when the folder cannot be opened or the file written,
    or is a symlink (replacing it with a file would undo a dotfile manager's link)."""
    if os.path.islink(path):
        raise safe_read.UnreadableFile(f"{visible_path(str(path))} is a symlink: change it by hand")
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = read()
        before = json.dumps(data, sort_keys=True)
        yield data
        if json.dumps(data, sort_keys=True) != before:
            write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode=mode)
    finally:
        os.close(fd)  # closing releases the lock


def shown_setting_path(path: Path, root: Path) -> str:
    """`.claude/settings.json` inside the project, `~/.claude/settings.json` in home."""
    absolute = Path(os.path.abspath(path))
    if absolute.is_relative_to(root) and absolute != root:
        return visible_path(str(absolute.relative_to(root)))
    return shown_path(absolute)


def _kind(value: object) -> str:
    return {list: "list", str: "string", bool: "true or false", type(None): "null"}.get(type(value), "number")
