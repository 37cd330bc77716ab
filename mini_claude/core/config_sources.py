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


# The hook events mini-claude emits, by Claude Code's names (extensions/hooks runs them).
HOOK_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)


@dataclass(frozen=True)
class HookSpec:
    """One `type: "command"` hook of the settings files, checked: plain values."""

    event: str  # one of HOOK_EVENTS
    matcher: str  # "" (or "*"): every tool (or source, trigger…); else a name, `A|B`, or a regex
    command: str  # run with bash in the project folder
    timeout: float  # seconds
    source: str  # the settings file it came from, as shown to the user
    scope: Scope
