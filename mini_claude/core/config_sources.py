"""What the settings files gave, as plain values kept with the file each came from (app/settings
reads the files; nothing below app/ does). The permission rules are kept as written: matching
them is the permission checker's business."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RuleKind = Literal["allow", "ask", "deny"]
RULE_KINDS: tuple[RuleKind, ...] = ("allow", "ask", "deny")
# Where a value came from, most general first: the user's files, the project's (committed), the
# project's local ones (personal), `--settings`; flags and the environment are named as such.
Scope = Literal["user", "project", "local", "flag"]


@dataclass(frozen=True)
class PermissionRule:
    kind: RuleKind
    rule: str  # as written: `Bash(npm run test:*)`, `Read(./secrets/**)`, `WebFetch`
    source: str  # the settings file it came from, as shown to the user
    scope: Scope


@dataclass(frozen=True)
class SettingsFileReport:
    """One settings file that exists: what became of it, for /status."""

    path: str  # as shown to the user
    scope: Scope
    status: str  # "used", or why it was skipped, or which parts were ignored and why


@dataclass(frozen=True)
class McpOptions:
    """How MCP servers are run (app/settings/mcp_options.py reads them)."""

    connect_timeout: float = 30.0  # seconds for a server to connect and list its tools
    tool_timeout: float = 300.0  # seconds a tool call may take
    search_after: int = 40  # more MCP tools than this: their definitions are loaded on demand
    enable_all: bool = False  # enableAllProjectMcpServers: every server of .mcp.json approved
    enabled: tuple[str, ...] = ()  # enabledMcpjsonServers: these approved
    disabled: tuple[str, ...] = ()  # disabledMcpjsonServers: these never start
