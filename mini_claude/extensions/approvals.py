"""What skills, custom commands and hooks approve in advance, and the seam to the permission checker.

Two things spare the user a permission question, never past the Safety protections:
- the `allowed-tools` of a skill or custom command, for the rest of the turn it runs in;
- a PreToolUse hook's `permissionDecision: "allow"` (or the user's yes at its `ask`), for that call.

The seam: the permission checker consults `approved` before it asks (app/ sets it as its
`approved` callback). A question about something approved here is not asked, when it is one that an
"always" could answer: the protections (git directories, home dotfiles, instruction and settings
files, writes outside the project) never offer "always", so they still ask. `extra_allow_rules` and
`call_approval` say the same as values, for a permission checker that takes rules (issue 27's).
Until then, rules are matched here in a reduced form: a tool name (`Read`, `Bash`, ours or
Claude Code's), and `Bash(git diff:*)` (prefix) or `Bash(git status)` (exact) for a command that
is one simple command (no `;`, `&`, `|`, `$`, backquote, redirection or subshell); a path
specifier (`Edit(src/**)`) approves nothing yet: those still ask.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from mini_claude.safety.permissions import PermissionRequest
from mini_claude.safety.tool_names import our_name

_RULE = re.compile(r"(?P<tool>[A-Za-z_][\w-]*)(?:\((?P<spec>.*)\))?", re.DOTALL)
# What makes a command more than one simple command, or lets it run another (bash's syntax).
_NOT_SIMPLE = re.compile(r"[;&|<>$`(){}\\\n\r]")


@dataclass(frozen=True)
class AllowRule:
    text: str  # as written: `Bash(git diff:*)`
    source: str  # what allowed it: "skill review (.claude/skills/review/SKILL.md)"


class Approvals:
    def __init__(self) -> None:
        self._turn: list[AllowRule] = []
        self._call: tuple[str, str] | None = None  # (tool call id, why) a hook approved

    # --- what is approved ---------------------------------------------------------------------

    def allow_for_turn(self, rules: tuple[str, ...], source: str) -> None:
        """`allowed-tools` of a skill or command starting now: until the turn ends."""
        self._turn += [AllowRule(rule, source) for rule in rules if rule.strip()]

    def approve_call(self, call_id: str, why: str) -> None:
        """A hook approved the tool call about to run: until it ends."""
        self._call = (call_id, why)

    def end_call(self) -> None:
        self._call = None

    def end_turn(self) -> None:
        self._turn = []
        self._call = None

    @property
    def extra_allow_rules(self) -> tuple[AllowRule, ...]:
        """The allow rules in effect now besides the settings' (for a rule-based checker)."""
        return tuple(self._turn)

    @property
    def call_approval(self) -> str | None:
        """Why the tool call running now is approved by a hook, or None."""
        return self._call[1] if self._call is not None else None

    # --- the seam -------------------------------------------------------------------------------

    def approved(self, request: PermissionRequest) -> str | None:
        """Why `request` needs no question, or None; never for a protection (see the module doc)."""
        if not request.allow_always:
            return None
        if self._call is not None:
            return self._call[1]
        rule = next((rule for rule in self._turn if covers(rule.text, request)), None)
        return f"allowed by {rule.text} ({rule.source})" if rule is not None else None


def covers(rule: str, request: PermissionRequest) -> bool:
    """Whether the allow rule `rule` covers `request`, in the reduced form of the module doc."""
    found = _RULE.fullmatch(rule.strip())
    if found is None:
        return False
    tool, spec = our_name(found["tool"]), found["spec"]
    if request.action == "shell":
        if tool != "run_shell" or request.tool != "run_shell":
            return False
        return spec is None or _command_matches(spec.strip(), request.target.strip())
    return spec is None and tool == request.tool


def _command_matches(spec: str, command: str) -> bool:
    if not command or _NOT_SIMPLE.search(command):
        return False
    if spec.endswith(":*"):
        prefix = spec[:-2].rstrip()
        return command == prefix or command.startswith(prefix + " ")
    if "*" in spec:
        return fnmatch.fnmatchcase(command, spec)
    return command == spec
