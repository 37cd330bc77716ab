"""Where MCP servers are configured, in Claude Code's format: the project's `.mcp.json` at its
root (shared through the repository) and the user's `~/.mini-claude/mcp.json` (every project).
Read as settings files are (a regular file, at most 1 MB, a project's not leading out of it);
changed (`mini-claude mcp add|remove`) under a lock, atomically, keeping every other key."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.app.settings.files import SettingsError, parse_settings, read_settings_file
from mini_claude.core.config import app_home
from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.files.private_files import FILE_MODE, locked, private_folder
from mini_claude.core.paths import visible_path
from mini_claude.tools.mcp.config import SCOPES, SERVERS_KEY, Scope, ServerConfig, parse_servers

PROJECT_FILE = ".mcp.json"
USER_FILE = "mcp.json"
LOCK_FILE = ".mcp-config.lock"  # in ~/.mini-claude: one writer of any MCP configuration at a time
SHOWN_NAMES = 6  # of a project's servers, in the folder-trust question


class McpFileError(Exception):
    """A configuration file that cannot be read or changed: one line naming it."""


@dataclass
class ConfiguredServers:
    servers: dict[str, ServerConfig] = field(default_factory=dict)  # by name; the project's win
    problems: list[str] = field(default_factory=list)  # one line each
    shadowed: list[str] = field(default_factory=list)  # user servers a project server of that name hides
    unusable: dict[str, str] = field(default_factory=dict)  # servers whose entry cannot be used, and why


def config_file(scope: Scope, root: Path) -> Path:
    return root / PROJECT_FILE if scope == "project" else app_home() / USER_FILE


def shown_file(scope: Scope) -> str:
    return PROJECT_FILE if scope == "project" else f"~/.mini-claude/{USER_FILE}"


def configured_servers(root: Path, home: Path) -> ConfiguredServers:
    """Every configured server: the user's, then the project's (which win a name both use)."""
    found = ConfiguredServers()
    for scope in SCOPES:
        try:
            data = read_config(scope, root, home)
        except McpFileError as error:
            found.problems.append(str(error))
            continue
        servers, problems, unusable = parse_servers(data, scope=scope, source=shown_file(scope))
        found.problems += problems
        found.unusable.update(unusable)
        for server in servers:
            if server.name in found.servers:
                found.shadowed.append(server.name)
            found.servers[server.name] = server
    return found


def read_config(scope: Scope, root: Path, home: Path) -> dict[str, Any]:
    """The file's JSON object ({} when there is none); McpFileError when it cannot be used."""
    path = config_file(scope, root)
    try:
        found = read_settings_file(path, scope, root, home)
    except SettingsError as error:
        raise McpFileError(str(error).replace("settings file", "configuration file")) from None
    return dict(found.data) if found is not None else {}


def add_server(scope: Scope, root: Path, name: str, entry: dict[str, Any]) -> bool:
    """Write `entry` as server `name`; True when it replaced one of that name."""

    def change(servers: dict[str, Any]) -> bool:
        replaced = name in servers
        servers[name] = entry
        return replaced

    return _changed(scope, root, change)


def remove_server(scope: Scope, root: Path, name: str) -> bool:
    """Take server `name` out of the file; False when it was not there."""
    return _changed(scope, root, lambda servers: servers.pop(name, None) is not None)


def _changed(scope: Scope, root: Path, change: Any) -> bool:
    path = config_file(scope, root)
    with _locked():
        data = _read_for_change(path)
        servers = data.setdefault(SERVERS_KEY, {})
        if not isinstance(servers, dict):
            raise McpFileError(
                f"{visible_path(str(path))}: {SERVERS_KEY} is not an object: fix it by hand first"
            )
        result: bool = change(servers)
        mode = FILE_MODE if scope == "user" else None
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode=mode)
        return result


def _read_for_change(path: Path) -> dict[str, Any]:
    """The file's object as it is now; McpFileError when it holds what we must not overwrite."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return {}
    if not stat.S_ISREG(info.st_mode):
        raise McpFileError(f"{visible_path(str(path))} is not a regular file: nothing was changed")
    data = path.read_bytes()
    try:
        return parse_settings(data, visible_path(str(path)))
    except SettingsError as error:
        raise McpFileError(f"{error}: fix it by hand first (nothing was changed)") from None


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """One writer at a time: two `mcp add` at once both keep their server. The lock lives in
    our own folder, so that none is left in a repository."""
    private_folder(app_home())
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(locked(app_home() / LOCK_FILE))
        except OSError as error:
            where = f"{visible_path(error.filename)}: " if error.filename else ""
            raise McpFileError(f"{where}{error.strerror or error}") from None
        yield


def project_servers_part(root: Path, home: Path) -> list[str]:
    """What the project's `.mcp.json` would do, for the folder-trust question: start servers."""
    try:
        data = read_config("project", root, home)
    except McpFileError:
        return []
    servers = data.get(SERVERS_KEY)
    if not isinstance(servers, dict) or not servers:
        return []
    names = [visible_path(str(name))[:40] for name in list(servers)[:SHOWN_NAMES]]
    more = f" and {len(servers) - SHOWN_NAMES} more" if len(servers) > SHOWN_NAMES else ""
    return [
        f"{PROJECT_FILE}: start MCP servers: {', '.join(names)}{more} (each asks once before it first starts)"
    ]
