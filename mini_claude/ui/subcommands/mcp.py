"""`mini-claude mcp add|list|get|remove`: MCP servers in `~/.mini-claude/mcp.json` (the user's,
by default) or the project's `.mcp.json` (`--scope project`), Claude Code's commands and format.
`list` and `get` connect to the servers to say how they are, as `/mcp` does."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from mini_claude.app.mcp.entries import EntryError, server_entry
from mini_claude.app.mcp.files import (
    McpFileError,
    add_server,
    config_file,
    read_config,
    remove_server,
    shown_file,
)
from mini_claude.app.mcp.servers import SessionServers
from mini_claude.core.config import Settings, git_work_tree_root
from mini_claude.core.untrusted import visible_text
from mini_claude.tools.base import count_noun
from mini_claude.tools.mcp.config import SCOPES, SERVERS_KEY, Scope, transport_of
from mini_claude.tools.mcp.connection import ServerView
from mini_claude.tools.registry import ToolRegistry
from mini_claude.ui.subcommands.shell_io import EXIT_FAILED, EXIT_OK, EXIT_USAGE


def run_mcp_command(settings: Settings, command: argparse.Namespace) -> int:
    root = _root(settings)
    try:
        if command.action == "add":
            return _add(root, command)
        if command.action == "remove":
            return _remove(root, command.name, command.scope)
        if command.action == "get":
            return _get(settings, root, command.name)
        return _list(settings)
    except (McpFileError, OSError) as error:
        _error(str(error) if isinstance(error, McpFileError) else f"{error.strerror or error}")
        return EXIT_FAILED


def _add(root: Path, command: argparse.Namespace) -> int:
    scope: Scope = command.scope
    try:
        entry = server_entry(command.name, command.transport, command.target, command.env, command.header)
    except EntryError as error:
        _error(str(error))
        return EXIT_USAGE
    if command.name in _servers(scope, root):
        _error(f"{scope} scope already has a server {command.name} ({shown_file(scope)}): "
               f"mini-claude mcp remove {command.name} first")  # fmt: skip
        return EXIT_FAILED
    add_server(scope, root, command.name, entry)
    where = shown_file(scope) if scope == "user" else visible_text(str(config_file(scope, root)))
    print(f"Added {command.transport} MCP server {command.name} to {where}.")
    if scope == "project":
        print("Each person who starts mini-claude here approves it once (it asks, showing what it runs).")
    return EXIT_OK


def _remove(root: Path, name: str, scope: Scope | None) -> int:
    having = [where for where in SCOPES if name in _servers(where, root)]
    if scope is None and len(having) > 1:
        _error(f"both scopes have a server {name}: add --scope user or --scope project")
        return EXIT_USAGE
    chosen: Scope | None = scope or (having[0] if having else None)
    if chosen is None or not remove_server(chosen, root, name):
        _error(f"no MCP server named {visible_text(name)}" + (f" in {shown_file(chosen)}" if chosen else ""))
        return EXIT_FAILED
    print(f"Removed MCP server {name} from {shown_file(chosen)}.")
    return EXIT_OK


def _get(settings: Settings, root: Path, name: str) -> int:
    found = [(scope, _servers(scope, root).get(name)) for scope in SCOPES]
    entries = [(scope, entry) for scope, entry in found if entry is not None]
    if not entries:
        _error(f"no MCP server named {visible_text(name)} (mini-claude mcp list shows them)")
        return EXIT_FAILED
    scope, entry = entries[-1]  # the project's wins, as at start
    print(f"{name}:")
    print(f"  scope: {scope} ({shown_file(scope)})")
    kind = transport_of(entry, name) if isinstance(entry, dict) else "?"
    print(f"  type: {kind}")
    for key in ("command", "args", "url", "env", "headers"):
        if isinstance(entry, dict) and key in entry:
            print(f"  {key}: {visible_text(json.dumps(entry[key], ensure_ascii=False))}")
    servers = _connected(settings)
    view = servers.manager.view(name)
    state = _state(view, servers) if view else "not started: " + servers.skipped.get(name, "not configured")
    print(f"  state: {state}")
    servers.close()
    return EXIT_OK


def _list(settings: Settings) -> int:
    servers = _connected(settings)
    if not servers.manager.names and not servers.skipped:
        print("No MCP servers configured. Add one: mini-claude mcp add NAME -- COMMAND [ARGS…]")
    for view in servers.manager.views():
        config = view.config
        state = _state(view, servers)
        print(f"{view.name}: {config.command_line} ({config.transport}, {config.source}) - {state}")
    for name, why in servers.skipped.items():
        print(f"{name}: not started: {why}")
    servers.close()
    return EXIT_OK


def _connected(settings: Settings) -> SessionServers:
    """The servers that may start, connected (or failed) within the connect time limit."""
    servers = SessionServers(settings, ToolRegistry([], {}), lambda event: None, ask=None)
    if servers.manager.names:
        print("Checking MCP servers…", file=sys.stderr, flush=True)
    for note in servers.notes:
        print(visible_text(note), file=sys.stderr)
    servers.notes = []
    servers.start()
    servers.wait_until_connected(settings.mcp.connect_timeout + 1)
    return servers


def _state(view: ServerView, servers: SessionServers) -> str:
    if view.state == "connected":
        usable = sum(tool.server == view.name for tool in servers.tools.tools())
        skipped = f", {len(view.tools) - usable} skipped" if len(view.tools) > usable else ""
        return f"✓ connected ({count_noun(usable, 'tool')}{skipped})"
    if view.state == "failed":
        return f"✗ failed: {view.error}"
    return view.state


def _servers(scope: Scope, root: Path) -> dict[str, object]:
    data = read_config(scope, root)
    servers = data.get(SERVERS_KEY, {})
    return servers if isinstance(servers, dict) else {}


def _root(settings: Settings) -> Path:
    project = Path(os.path.realpath(settings.project_dir))
    return git_work_tree_root(project) or project


def _error(text: str) -> None:
    print(f"mini-claude mcp: {visible_text(text)}", file=sys.stderr)
