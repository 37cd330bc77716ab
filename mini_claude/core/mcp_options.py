"""How MCP servers run, from the environment (`MINI_CLAUDE_MCP_TIMEOUT`,
`MINI_CLAUDE_MCP_TOOL_TIMEOUT`, `MINI_CLAUDE_MCP_TOOL_SEARCH`, which a settings file's `env` may
set) and from the settings keys that approve or refuse the servers of `.mcp.json` (checked by
app/settings, passed in as `values`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from mini_claude.core.env_values import ConfigError


@dataclass(frozen=True)
class McpOptions:
    connect_timeout: float = 30.0  # seconds for a server to connect and list its tools
    tool_timeout: float = 300.0  # seconds a tool call may take
    search_after: int = 40  # more MCP tools than this: their definitions are loaded on demand
    enable_all: bool = False  # enableAllProjectMcpServers: every server of .mcp.json approved
    enabled: tuple[str, ...] = ()  # enabledMcpjsonServers: these approved
    disabled: tuple[str, ...] = ()  # disabledMcpjsonServers: these never start


CONNECT_TIMEOUT = "MINI_CLAUDE_MCP_TIMEOUT"
TOOL_TIMEOUT = "MINI_CLAUDE_MCP_TOOL_TIMEOUT"
TOOL_SEARCH = "MINI_CLAUDE_MCP_TOOL_SEARCH"
SEARCH_ALWAYS, SEARCH_NEVER = 0, 1_000_000  # `on`: every MCP tool on demand; `off`: none


def mcp_options(values: Mapping[str, tuple[object, str]]) -> McpOptions:
    """ConfigError naming the variable when one has a value that cannot be used."""
    default = McpOptions()

    def listed(name: str) -> tuple[str, ...]:
        value = values.get(name, ((), ""))[0]
        return tuple(value) if isinstance(value, tuple) else ()

    return McpOptions(
        connect_timeout=_seconds(CONNECT_TIMEOUT, default.connect_timeout),
        tool_timeout=_seconds(TOOL_TIMEOUT, default.tool_timeout),
        search_after=_search_after(default.search_after),
        enable_all=values.get("mcp_enable_all", (False, ""))[0] is True,
        enabled=listed("mcp_enabled"),
        disabled=listed("mcp_disabled"),
    )


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise ConfigError(f"{name}={raw!r} must be a number of seconds above 0")
    return value


def _search_after(default: int) -> int:
    raw = os.environ.get(TOOL_SEARCH, "").strip().lower()
    if not raw or raw == "auto":
        return default
    if raw in ("on", "true", "1", "yes"):
        return SEARCH_ALWAYS
    if raw in ("off", "false", "0", "no"):
        return SEARCH_NEVER
    if raw.startswith("auto:"):
        raw = raw[len("auto:") :]
    if raw.isdigit():
        return int(raw)
    raise ConfigError(
        f"{TOOL_SEARCH}={raw!r} is not on, off, auto or a number of tools (past which they load on demand)"
    )
