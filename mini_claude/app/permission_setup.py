"""The permission rules and starting mode of a session, from their sources as plain values.

THE SEAM for the settings files: `PermissionSettings` is what any settings source hands over —
rule entries (text, allow/ask/deny, the file, the folder `./` starts from), a `defaultMode` and
whether read-only commands run unasked. Today it is filled from the flags and from the project's
`.mini-claude/settings.local.json` (`from_local_file`); a loader of every settings file only has
to give more entries, most general first, and `build_rule_set` / `starting_mode` do the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.app.local_settings import LocalSettings, SettingsFileError
from mini_claude.core.config import PERMISSION_MODE_ALIASES, PERMISSION_MODES, Settings
from mini_claude.safety.decision import RuleSet
from mini_claude.safety.rules import Rule, RuleEntry, RuleError, parse_rule

Warn = Callable[[str], None]
ALLOWED_FLAG = "--allowedTools"
DISALLOWED_FLAG = "--disallowedTools"


@dataclass
class PermissionSettings:
    entries: list[RuleEntry] = field(default_factory=list)
    default_mode: str | None = None  # as written in a file (Claude Code's or our name)
    default_mode_source: str = ""
    read_only_commands: bool | None = None  # None: not said


def split_flag_rules(values: Sequence[str]) -> list[str]:
    """`--allowedTools "Bash(git log:*) Read,Edit"` (repeatable): each rule once, in order. A
    comma or space inside parentheses is part of the rule; an unclosed one runs to the end."""
    rules: list[str] = []
    for value in values:
        depth, current = 0, ""
        for char in value:
            if depth == 0 and (char == "," or char.isspace()):
                rules.append(current)
                current = ""
                continue
            depth += {"(": 1, ")": -1}.get(char, 0)
            current += char
        rules.append(current)
    return list(dict.fromkeys(rule for rule in rules if rule))


def from_flags(settings: Settings, base: Path) -> PermissionSettings:
    entries = [RuleEntry(t, "allow", ALLOWED_FLAG, base) for t in split_flag_rules(settings.allowed_tools)]
    entries += [
        RuleEntry(t, "deny", DISALLOWED_FLAG, base) for t in split_flag_rules(settings.disallowed_tools)
    ]
    return PermissionSettings(entries)


def from_local_file(local: LocalSettings, warn: Warn) -> PermissionSettings:
    """The local settings file's permissions; a file that cannot be read is skipped with one line."""
    try:
        permissions = local.permissions()
        texts = local.rule_texts()
    except SettingsFileError as error:
        warn(f"{error} (its rules are not used)")
        return PermissionSettings()
    found = PermissionSettings(
        [RuleEntry(text, behaviour, local.shown, local.root) for text, behaviour in texts]
    )
    mode = permissions.get("defaultMode")
    if mode is not None:
        found.default_mode, found.default_mode_source = str(mode), local.shown
    switch = permissions.get("readOnlyCommands")
    if isinstance(switch, bool):
        found.read_only_commands = switch
    elif switch is not None:
        warn(f"{local.shown}: permissions.readOnlyCommands must be true or false (ignored)")
    return found


def combined(*sources: PermissionSettings) -> PermissionSettings:
    """Most general first: rules add up; a later source's defaultMode and switch win."""
    result = PermissionSettings()
    for source in sources:
        result.entries += source.entries
        if source.default_mode is not None:
            result.default_mode, result.default_mode_source = source.default_mode, source.default_mode_source
        if source.read_only_commands is not None:
            result.read_only_commands = source.read_only_commands
    return result


def build_rule_set(found: PermissionSettings, settings: Settings, home: Path, warn: Warn) -> RuleSet:
    """The rules that parse (each one that does not: one warning line naming its file)."""
    rules: list[Rule] = []
    for entry in found.entries:
        try:
            rules.append(parse_rule(entry, home))
        except RuleError as error:
            warn(f"{error} (skipped)")
    switch = found.read_only_commands
    return RuleSet(rules, read_only_commands=settings.read_only_commands and switch is not False)


def starting_mode(found: PermissionSettings, settings: Settings, warn: Warn) -> str:
    """The flag's or environment's mode, else a file's defaultMode, else default. A file cannot
    start bypass: only --permission-mode bypass (or --dangerously-skip-permissions) can."""
    if settings.permission_mode_chosen or found.default_mode is None:
        return settings.permission_mode
    mode = PERMISSION_MODE_ALIASES.get(found.default_mode, found.default_mode)
    where = found.default_mode_source
    if mode == "bypass":
        warn(f"{where}: defaultMode {found.default_mode} is ignored: bypass starts only from "
             "--permission-mode bypass or --dangerously-skip-permissions")  # fmt: skip
        return settings.permission_mode
    if mode not in PERMISSION_MODES:
        names = ", ".join(
            sorted({*PERMISSION_MODE_ALIASES, *PERMISSION_MODES} - {"bypass", "bypassPermissions"})
        )
        warn(f"{where}: defaultMode {found.default_mode!r} is not one of: {names} (ignored)")
        return settings.permission_mode
    return mode


def validate_flag_rules(settings: Settings) -> str | None:
    """The first --allowedTools / --disallowedTools rule that does not parse, as one line; None if all do."""
    for entry in from_flags(settings, Path.cwd()).entries:
        try:
            parse_rule(entry, Path.home())
        except RuleError as error:
            return str(error)
    return None
