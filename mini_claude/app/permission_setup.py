"""The permission rules of a session, from plain values: the settings files' rules as the loader
kept them (`Settings.permission_rules`, most general first, a project's allow rules only in a
trusted folder), then `--allowedTools` / `--disallowedTools`. Each becomes a `RuleEntry` with the
folder its relative paths start from: the project root for a settings file, the working directory
for a flag (and for `--settings`). The decision itself is safety/decision.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from mini_claude.core.config import Settings
from mini_claude.core.frontmatter.scalars import split_outside
from mini_claude.safety.decision import RuleSet
from mini_claude.safety.rules import Rule, RuleEntry, RuleError, parse_rule

Warn = Callable[[str], None]
ALLOWED_FLAG = "--allowedTools"
DISALLOWED_FLAG = "--disallowedTools"


def split_flag_rules(values: Sequence[str]) -> list[str]:
    """`--allowedTools "Bash(git log:*) Read,Edit"` (repeatable): each rule once, in order. A
    comma or space inside parentheses is part of the rule; an unclosed one runs to the end."""
    rules = [rule for value in values for rule in split_outside(value, _separates, "()")]
    return list(dict.fromkeys(rules))


def _separates(char: str) -> bool:
    return char == "," or char.isspace()


def flag_entries(allowed: Sequence[str], disallowed: Sequence[str], cwd: Path) -> list[RuleEntry]:
    entries = [RuleEntry(text, "allow", ALLOWED_FLAG, cwd) for text in split_flag_rules(allowed)]
    return entries + [RuleEntry(text, "deny", DISALLOWED_FLAG, cwd) for text in split_flag_rules(disallowed)]


def rule_entries(settings: Settings, root: Path) -> list[RuleEntry]:
    """Every rule in effect, most general first: the settings files', then the flags'."""
    cwd = Path(os.path.realpath(settings.project_dir))
    from_files = [
        RuleEntry(rule.rule, rule.kind, rule.source, cwd if rule.scope == "flag" else root)
        for rule in settings.permission_rules
    ]
    return from_files + flag_entries(settings.allowed_tools, settings.disallowed_tools, cwd)


def build_rule_set(settings: Settings, root: Path, home: Path, warn: Warn) -> RuleSet:
    """The rules that parse (each one that does not: one warning line naming its file)."""
    rules: list[Rule] = []
    for entry in rule_entries(settings, root):
        try:
            rules.append(parse_rule(entry, home))
        except RuleError as error:
            warn(f"{error} (skipped)")
    return RuleSet(rules, read_only_commands=settings.read_only_commands)


def validate_flag_rules(allowed: Sequence[str], disallowed: Sequence[str]) -> str | None:
    """The first --allowedTools / --disallowedTools rule that does not parse, as one line; None if
    all do (a flag's rule is a usage error: running without it would run with other permissions)."""
    for entry in flag_entries(allowed, disallowed, Path.cwd()):
        try:
            parse_rule(entry, Path.home())
        except RuleError as error:
            return str(error)
    return None
