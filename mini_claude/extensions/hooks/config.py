"""The `hooks` key of a settings file, in Claude Code's format, checked into plain `HookSpec`s:

    "hooks": {
      "PostToolUse": [
        {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npm run lint", "timeout": 30}]}
      ]
    }

What cannot be used is named in one line each (an event this version does not emit, a hook type
other than `command`, a matcher that is no regular expression, a timeout that is no number of
seconds) and left out; the rest still count.
"""

from __future__ import annotations

from typing import Any

from mini_claude.core.config_sources import HOOK_EVENTS, HookSpec, Scope
from mini_claude.core.untrusted import visible_text
from mini_claude.extensions.hooks.matching import MatcherError, check_matcher

HOOKS_KEY = "hooks"
DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 3600.0
HOOKS_MAX = 100  # per settings file
COMMAND_MAX_CHARS = 10_000
# Claude Code's other events and hook types: named as such, so a shared settings file reads well.
OTHER_EVENTS = ("SubagentStop", "SubagentStart", "PermissionRequest", "PostToolUseFailure", "PostCompact")
NAME_SHOWN_CHARS = 60


def parse_hooks(value: object, source: str = "", scope: Scope = "user") -> tuple[list[HookSpec], list[str]]:
    """The usable hooks in a settings file's `hooks` value, and one line per problem."""
    specs: list[HookSpec] = []
    problems: list[str] = []
    if not isinstance(value, dict):
        return [], [f"{HOOKS_KEY} must be an object of event names (PreToolUse, Stop, …): ignored"]
    for event, groups in value.items():
        where = f"{HOOKS_KEY}.{_shown(event)}"
        if event not in HOOK_EVENTS:
            why = "this version does not emit it" if event in OTHER_EVENTS else "no such event"
            problems.append(f"{where}: {why} (events: {', '.join(HOOK_EVENTS)}): ignored")
            continue
        if not isinstance(groups, list):
            problems.append(f"{where} must be a list of {{matcher, hooks}} objects: ignored")
            continue
        for group in groups:
            _group(event, group, where, specs, problems, source, scope)
    if len(specs) > HOOKS_MAX:
        problems.append(f"{HOOKS_KEY}: more than {HOOKS_MAX} hooks: the rest are ignored")
    return specs[:HOOKS_MAX], problems


def _group(
    event: str, group: object, where: str, specs: list[HookSpec], problems: list[str],
    source: str, scope: Scope,
) -> None:  # fmt: skip
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        problems.append(f"{where}: each entry must be an object with a `hooks` list: one ignored")
        return
    matcher = group.get("matcher", "")
    if not isinstance(matcher, str):
        problems.append(f"{where}: a matcher must be text (a tool name, A|B, or a regex): its hooks ignored")
        return
    try:
        check_matcher(matcher)
    except MatcherError as error:
        problems.append(f"{where}: matcher {_shown(matcher)!r} is {error}: its hooks ignored")
        return
    for hook in group["hooks"]:
        spec = _hook(event, matcher, hook, where, problems)
        if spec is not None:
            specs.append(HookSpec(event, matcher, spec[0], spec[1], source, scope))


def _hook(event: str, matcher: str, hook: Any, where: str, problems: list[str]) -> tuple[str, float] | None:
    """(command, timeout) of one hook entry, or None with the problem told."""
    if not isinstance(hook, dict):
        problems.append(f"{where}: a hook must be an object with type and command: one ignored")
        return None
    kind = hook.get("type")
    if kind != "command":
        shown = _shown(kind) if isinstance(kind, str) else "missing"
        problems.append(f'{where}: a hook of type {shown!r} ignored: this version runs type "command" only')
        return None
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip() or "\0" in command:
        problems.append(f"{where}: a command hook without a command (text) ignored")
        return None
    if len(command) > COMMAND_MAX_CHARS:
        problems.append(f"{where}: a command longer than {COMMAND_MAX_CHARS:,} characters ignored")
        return None
    timeout = hook.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= MAX_TIMEOUT_S:
        problems.append(
            f"{where}: timeout {_shown(str(timeout))} must be a number of seconds, more than 0 and at most "
            f"{MAX_TIMEOUT_S:g}: {DEFAULT_TIMEOUT_S:g} used"
        )
        timeout = DEFAULT_TIMEOUT_S
    return command, float(timeout)


def _shown(text: object) -> str:
    return visible_text(str(text))[:NAME_SHOWN_CHARS]
