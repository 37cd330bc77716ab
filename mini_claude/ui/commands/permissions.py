"""`/permissions`: every rule in effect with the file it came from, the mode and this
conversation's grants; `/permissions allow|ask|deny RULE` adds a rule to the project's local
settings, `/permissions rm RULE` removes one (as Claude Code's /permissions)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import Completion

from mini_claude.app.instructions.local_file import ignore_local_file
from mini_claude.app.settings.local_rules import LOCAL_RULES_FILE, SettingsFileError
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import visible_text
from mini_claude.safety.rules import BEHAVIOURS, RuleError
from mini_claude.ui.commands.registry import CommandContext, command, completions

if TYPE_CHECKING:
    from mini_claude.app.session import Session

ACTIONS = ("allow", "ask", "deny", "rm")
USAGE = "/permissions [allow|ask|deny RULE | rm RULE], e.g. /permissions allow Bash(npm test:*)"
MODE_NAMES = {"ask": "default", "accept-edits": "acceptEdits", "plan": "plan", "bypass": "bypassPermissions"}
RULE_COLUMN = 32


def _say(ctx: CommandContext, text: str, style: str = "") -> None:
    ctx.say(text, style, soft_wrap=True)  # a rule and its source stay on one line


def _complete(session: Session, typed: str) -> Iterator[Completion]:
    if " " not in typed:
        return completions(ACTIONS, typed)
    rules = session.permissions.rules.rules if typed.startswith("rm ") else []
    return completions((rule.text for rule in rules), typed[3:])


@command(
    "permissions",
    "Show the permission rules and mode; with allow, ask or deny RULE adds a rule, with rm RULE removes one",
    complete=_complete,
)
def _permissions(ctx: CommandContext, argument: str) -> None:
    action, _, rule = argument.partition(" ")
    rule = rule.strip()
    if not argument:
        _list(ctx)
    elif action in ("allow", "ask", "deny") and rule:
        _add(ctx, action, rule)
    elif action == "rm" and rule:
        _remove(ctx, rule)
    else:
        _say(ctx, f"Usage: {USAGE}")


def _list(ctx: CommandContext) -> None:
    permissions = ctx.session.permissions
    mode = permissions.mode
    _say(ctx, f"Mode: {mode} ({MODE_NAMES[mode]}); Shift+Tab changes it", "bold")
    rules = permissions.rules
    if rules.read_only_commands:
        _say(
            ctx,
            "Read-only commands (ls, cat, grep, git status, …) run without asking; see docs/permissions.md",
        )
    else:
        origin = ctx.session.settings.origins.get("read_only_commands", "a setting")
        _say(ctx, f"Read-only commands ask like any other (turned off by {visible_text(origin)})")
    if not rules.rules:
        _say(ctx, "No rules.")
    for behaviour in BEHAVIOURS:
        chosen = [rule for rule in rules.rules if rule.behaviour == behaviour]
        if chosen:
            _say(ctx, f"{behaviour}:", "bold")
        for rule in chosen:
            text = visible_text(rule.text)
            _say(ctx, f"  {text.ljust(RULE_COLUMN)} {visible_text(rule.entry.source)}")
    for folder in sorted(permissions.scope.read_folders):
        _say(ctx, f"This conversation: reading {visible_path(str(folder))}")
    for report in ctx.session.settings.setting_files:
        if report.status != "used":  # skipped, or its allow rules left out in an untrusted folder
            _say(ctx, f"{visible_text(report.path)}: {visible_text(report.status)}", "yellow")
    local = ctx.session.local_rules.shown
    _say(
        ctx,
        f"Add one with /permissions allow|ask|deny RULE, remove one with /permissions rm RULE ({local}).",
        "dim",
    )


def _add(ctx: CommandContext, behaviour: str, text: str) -> None:
    session, local = ctx.session, ctx.session.local_rules.shown
    try:
        saved = session.save_rule(text, behaviour)  # type: ignore[arg-type]
    except (RuleError, SettingsFileError) as error:
        _say(ctx, str(error), "red")
        return
    shown = visible_text(text)
    if saved.added:
        _say(ctx, f"Added {behaviour} rule {shown} to {local}.")
    else:
        _say(ctx, f"{shown} is already a {behaviour} rule in {local}.")
    if saved.unignored is not None and ctx.confirm(
        f"Add {LOCAL_RULES_FILE} (your own permission rules) to .gitignore?"
    ):
        _say(ctx, ignore_local_file(saved.unignored, LOCAL_RULES_FILE))


def _remove(ctx: CommandContext, text: str) -> None:
    session, local = ctx.session, ctx.session.local_rules.shown
    try:
        removed = session.remove_rule(text)
    except SettingsFileError as error:
        _say(ctx, str(error), "red")
        return
    shown = visible_text(text)
    if not removed:
        elsewhere = [r.entry.source for r in session.permissions.rules.rules if r.text == text]
        where = f": it comes from {visible_text(elsewhere[0])}" if elsewhere else ""
        _say(ctx, f"{shown} is not in {local}{where}.")
        return
    _say(ctx, f"Removed {shown} ({', '.join(removed)}) from {local}.")
