"""The keys a settings file may hold, each checked: Claude Code's names where they mean the same
(`model`, `env`, `permissions`, `cleanupPeriodDays`, `autoMemoryEnabled`, `alwaysThinkingEnabled`),
and this project's own (`contextWindow`, `earlyRecall`, `permissions.readOnlyCommands`, `thinking`,
`maxCostUsd`), `hooks` (extensions/hooks/config.py checks them) and Claude Code's keys for the
servers of `.mcp.json`. A value of the wrong kind is ignored with a line saying what it must be;
keys mini-claude does not use are named in one line per file."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mini_claude.core.config import MIN_CONTEXT_WINDOW, PERMISSION_MODE_ALIASES, PERMISSION_MODES
from mini_claude.core.config_sources import RULE_KINDS, HookSpec, RuleKind
from mini_claude.core.untrusted import visible_text
from mini_claude.extensions.hooks.config import HOOKS_KEY, parse_hooks
from mini_claude.llm.thinking import DEFAULT_BUDGET, MIN_BUDGET

IGNORED_SILENTLY = ("$schema",)  # an editor's hint for completion
PERMISSIONS_KEY = "permissions"
ENV_KEY = "env"
RULE_MAX_CHARS = 1_000
RULES_MAX = 1_000  # per list, per file
ENV_MAX = 200  # variables per file
ENV_VALUE_MAX_CHARS = 10_000
DIRS_MAX = 50
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Modes other tools have that mini-claude does not (yet): said so, the mode left as it was.
NOT_AVAILABLE_MODES = ("dontAsk",)


class Wrong(ValueError):
    """What a value must be instead, e.g. "must be true or false"."""


@dataclass
class FileValues:
    """One file's usable values, by the names `config.load_settings` takes, and the rest."""

    scalars: dict[str, object] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    rules: list[tuple[RuleKind, str]] = field(default_factory=list)
    additional_dirs: list[str] = field(default_factory=list)
    unused: dict[str, Any] = field(default_factory=dict)  # keys mini-claude does not use, kept
    problems: list[str] = field(default_factory=list)  # one line each, naming the key
    hooks: list[HookSpec] = field(default_factory=list)  # their source and scope set by merge


def _model(value: object) -> str:
    if (
        not isinstance(value, str)
        or not value.strip()
        or any(c.isspace() or not c.isprintable() for c in value)
    ):
        raise Wrong("must be a model name (text without spaces)")
    return value


def _switch(value: object) -> bool:
    if not isinstance(value, bool):
        raise Wrong("must be true or false")
    return value


def _whole(minimum: int, what: str) -> Callable[[object], int]:
    def check(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise Wrong(f"must be a whole number of {what}, at least {minimum:,}")
        return value

    return check


def _thinking(value: object) -> int:
    """A thinking budget in tokens: true for the default one, false (0) for none."""
    if isinstance(value, bool):
        return DEFAULT_BUDGET if value else 0
    if not isinstance(value, int) or value < MIN_BUDGET:
        raise Wrong(f"must be true, false or a thinking budget of at least {MIN_BUDGET:,} tokens")
    return value


def _dollars(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
        raise Wrong("must be an amount of US dollars above 0, such as 5 or 0.50")
    return float(value)


def _mode(value: object) -> str:
    if isinstance(value, str) and value in NOT_AVAILABLE_MODES:
        raise Wrong(f"{value!r} is not a mode this version has: {', '.join(PERMISSION_MODES)}")
    mode = PERMISSION_MODE_ALIASES.get(value, value) if isinstance(value, str) else None
    if mode not in PERMISSION_MODES:
        raise Wrong(f"must be one of {', '.join((*PERMISSION_MODE_ALIASES, *PERMISSION_MODES))}")
    return str(mode)


def _server_names(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise Wrong("must be a list of MCP server names")
    return tuple(item.strip() for item in value[:RULES_MAX])


# settings key → (the name load_settings takes, its check)
SCALARS: dict[str, tuple[str, Callable[[object], object]]] = {
    "model": ("model", _model),
    "contextWindow": ("context_window", _whole(MIN_CONTEXT_WINDOW, "tokens")),
    "earlyRecall": ("early_recall", _switch),
    "autoMemoryEnabled": ("memory_enabled", _switch),
    "cleanupPeriodDays": ("session_retention_days", _whole(0, "days")),
    "maxToolCallsPerReply": ("max_tool_calls", _whole(1, "calls")),  # ours
    "thinking": ("thinking", _thinking),
    "alwaysThinkingEnabled": ("thinking", lambda value: _thinking(_switch(value))),  # Claude Code's
    "maxCostUsd": ("max_cost", _dollars),
    # Claude Code's keys for the servers of .mcp.json (app/mcp/approvals.py).
    "enableAllProjectMcpServers": ("mcp_enable_all", _switch),
    "enabledMcpjsonServers": ("mcp_enabled", _server_names),
    "disabledMcpjsonServers": ("mcp_disabled", _server_names),
}
PERMISSION_SCALARS = {
    "defaultMode": ("permission_mode", _mode),
    "readOnlyCommands": ("read_only_commands", _switch),  # ours: read-only commands run unasked
}


def check_values(data: dict[str, Any]) -> FileValues:
    """What `data` (a settings file's object) gives, key by key."""
    found = FileValues()
    unknown: list[str] = []
    for key, value in data.items():
        if key in SCALARS:
            _scalar(found, key, value, SCALARS[key])
        elif key == ENV_KEY:
            _env(found, value)
        elif key == PERMISSIONS_KEY:
            _permissions(found, value, unknown)
        elif key == HOOKS_KEY:
            found.hooks, problems = parse_hooks(value)
            found.problems += problems
        elif key not in IGNORED_SILENTLY:
            found.unused[key] = value
            unknown.append(key)
    if unknown:
        names = ", ".join(visible_text(name)[:60] for name in unknown[:10]) + (
            ", …" if len(unknown) > 10 else ""
        )
        found.problems.append(f"ignored (mini-claude does not use them): {names}")
    return found


def _scalar(found: FileValues, key: str, value: object, spec: tuple[str, Callable[[object], object]]) -> None:
    name, check = spec
    try:
        found.scalars[name] = check(value)
    except Wrong as wrong:
        found.problems.append(f"{key} {wrong}: ignored")


def _env(found: FileValues, value: object) -> None:
    if not isinstance(value, dict):
        found.problems.append(f"{ENV_KEY} must be an object of NAME: value: ignored")
        return
    for name, raw in list(value.items())[:ENV_MAX]:
        if not _ENV_NAME.fullmatch(name):
            found.problems.append(f"{ENV_KEY}: {visible_text(name)[:60]!r} is not a variable name: ignored")
        elif isinstance(raw, bool):
            found.env[name] = "true" if raw else "false"
        elif (
            isinstance(raw, str | int | float)
            and "\0" not in str(raw)
            and len(str(raw)) <= ENV_VALUE_MAX_CHARS
        ):
            found.env[name] = str(raw)
        else:
            found.problems.append(f"{ENV_KEY}.{name} must be text or a number: ignored")
    if len(value) > ENV_MAX:
        found.problems.append(f"{ENV_KEY}: more than {ENV_MAX} variables: the rest are ignored")


def _permissions(found: FileValues, value: object, unknown: list[str]) -> None:
    if not isinstance(value, dict):
        found.problems.append(f"{PERMISSIONS_KEY} must be an object (allow, ask, deny, …): ignored")
        return
    for key, item in value.items():
        where = f"{PERMISSIONS_KEY}.{key}"
        if key in RULE_KINDS:
            for rule in _strings(found, where, item, RULES_MAX, RULE_MAX_CHARS):
                found.rules.append((key, rule))
        elif key == "additionalDirectories":
            found.additional_dirs += _strings(found, where, item, DIRS_MAX, 4096)
        elif key in PERMISSION_SCALARS:
            _scalar(found, where, item, PERMISSION_SCALARS[key])
        else:
            found.unused.setdefault(PERMISSIONS_KEY, {})[key] = item
            unknown.append(where)


def _strings(found: FileValues, where: str, value: object, most: int, longest: int) -> list[str]:
    if not isinstance(value, list):
        found.problems.append(f"{where} must be a list of text: ignored")
        return []
    good = [item for item in value[:most] if isinstance(item, str) and item.strip() and len(item) <= longest]
    if len(good) < min(len(value), most):
        found.problems.append(f"{where}: entries that are not text (or longer than {longest:,}) ignored")
    if len(value) > most:
        found.problems.append(f"{where}: more than {most:,} entries: the rest are ignored")
    return [item.strip() for item in good]
