"""What skills, custom commands and hooks allow, as permission rules of the session for as long as
it holds, so that the one permission decision (safety/decision.py) judges them with the settings'
rules, by the same matcher:

- a skill's or custom command's `allowed-tools` are allow rules from when it starts until the
  turn ends (a project's only in a trusted folder: `Catalog.allowed_tools`);
- a PreToolUse hook's `permissionDecision` `allow` or `ask` is an allow or ask rule naming the
  tool, for that one call (its `deny` blocks the call before it runs: hooks/session_hooks.py).

Being rules, they come where rules come: after deny rules and plan mode, and an allow after ask
rules and the Safety protections too, which no rule opens.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from mini_claude.safety.permissions import Permissions
from mini_claude.safety.rules import Behaviour, Rule, RuleEntry, RuleError, parse_rule
from mini_claude.safety.tool_names import claude_name

HOOK_SOURCE = "a PreToolUse hook"

log = logging.getLogger("mini_claude")


class Approvals:
    def __init__(self, permissions: Permissions, base: Path) -> None:
        """`base`: the folder the rules' relative paths start from (the project root, as for a
        project's settings file)."""
        self.permissions = permissions
        self.base = base
        self._turn: list[Rule] = []
        self._call: Rule | None = None

    def allow_for_turn(self, texts: Iterable[str], source: str) -> None:
        """`allowed-tools` of a skill or command starting now (`source` names it): allow rules
        until the turn ends. One that does not parse is skipped (`/skills` names it)."""
        for text in texts:
            try:
                rule = parse_rule(RuleEntry(text, "allow", source, self.base), self.permissions.home)
            except RuleError as error:
                log.info("%s (skipped)", error)
                continue
            self.permissions.add_rule(rule)
            self._turn.append(rule)

    def decide_call(self, tool: str, behaviour: Behaviour, why: str = "") -> None:
        """A hook's answer for the tool call about to run: a rule naming `tool` until it ends."""
        self.end_call()
        source = HOOK_SOURCE + (f" ({why})" if why else "")
        self._call = Rule(RuleEntry(claude_name(tool), behaviour, source, self.base), tool)
        self.permissions.add_rule(self._call)

    def end_call(self) -> None:
        if self._call is not None:
            self.permissions.remove_rule(self._call.text, self._call.entry.source)
            self._call = None

    def end_turn(self) -> None:
        self.end_call()
        for rule in self._turn:
            self.permissions.remove_rule(rule.text, rule.entry.source)
        self._turn = []
