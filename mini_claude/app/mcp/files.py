"""Where MCP servers are configured, in Claude Code's format: the project's `.mcp.json` at its
root (shared through the repository) and the user's `~/.mini-claude/mcp.json` (every project).
Read as settings files are (a regular file, at most 1 MB, a project's not leading out of it);
changed (`mini-claude mcp add|remove`) as they are (`changed_json`), keeping every other key."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.app.settings.files import SettingsError, changed_json, read_settings_file
from mini_claude.core.config import app_home
from mini_claude.core.files.private_files import FILE_MODE, private_folder
from mini_claude.core.paths import visible_path
from mini_claude.tools.mcp.config import SCOPES, SERVERS_KEY, Scope, ServerConfig, parse_servers

PROJECT_FILE = ".mcp.json"
USER_FILE = "mcp.json"
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


def configured_servers(root: Path) -> ConfiguredServers:
    """Every configured server: the user's, then the project's (which win a name both use)."""
    found = ConfiguredServers()
    for scope in SCOPES:
        try:
            data = read_config(scope, root)
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


def read_config(scope: Scope, root: Path) -> dict[str, Any]:
    """The file's JSON object ({} when there is none); McpFileError when it cannot be used."""
    path = config_file(scope, root)
    try:
        found = read_settings_file(path, scope, root)
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
    """`change` the file's servers, every other key kept; McpFileError when it holds what we must
    not overwrite (invalid JSON, a special file) or cannot be written."""
    path = config_file(scope, root)
    try:
        if scope == "user":
            private_folder(app_home())
        with changed_json(
            path, lambda: read_config(scope, root), FILE_MODE if scope == "user" else None
        ) as data:
            servers = data.setdefault(SERVERS_KEY, {})
            if not isinstance(servers, dict):
                raise McpFileError(f"{visible_path(str(path))}: {SERVERS_KEY} is not an object")
            result: bool = change(servers)
            return result
    except McpFileError as error:
        raise McpFileError(
            f"{str(error).replace(': skipped', '')}: fix it by hand first (nothing was changed)"
        ) from None
    except OSError as error:
        where = f"{visible_path(error.filename)}: " if error.filename else ""
        raise McpFileError(f"{where}{error.strerror or error}") from None


def project_servers_part(root: Path) -> list[str]:
    """What the project's `.mcp.json` would do, for the folder-trust question: start servers."""
    try:
        data = read_config("project", root)
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
