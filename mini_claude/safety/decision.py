"""The one permission decision: (tool, what it would do, mode, rules, protections) → allow, ask or
deny, with the reason, and what an "always" answer to the question would mean.

Precedence, for every tool: deny rules, then plan mode's refusals, then ask rules, then the
protections (no allow rule opens them; only bypass passes some), then allow rules, then the mode.
Shell commands are judged in `shell_decision.py`, command by command, with the same rules; a
tool known only by its name (an MCP server's, the skill tool) by `decide_tool`; a web fetch by its domain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mini_claude.core.paths import display_path
from mini_claude.core.untrusted import visible_text
from mini_claude.safety.protections import Protections
from mini_claude.safety.rules import BEHAVIOURS, READ_TOOLS, Behaviour, Rule

Access = Literal["read", "write"]
MODES_THAT_EDIT = ("accept-edits", "bypass")
OUTSIDE_REASON = "outside the project"
EDIT_REASON = "edit a project file"
PLAN_REASON = "plan mode: nothing is changed until you approve a plan"
PLAN_TOOL_REASON = "plan mode, and its server does not say it only reads: it may change something"


@dataclass(frozen=True)
class Always:
    """What answering "always" does, as the question says it."""

    label: str  # "allow Bash(npm test:*) in this project"
    rules: tuple[str, ...] = ()  # saved to the project's local settings
    folder: Path | None = None  # reads below it are allowed for the rest of the conversation
    accept_edits: bool = False  # the conversation goes on in accept-edits


@dataclass(frozen=True)
class Decision:
    behaviour: Behaviour
    reason: str
    rule: Rule | None = None  # the rule that decided, if one did
    always: Always | None = None  # None: "always" is not offered (it would mean only once)
    plan: bool = False  # refused (or asked) because plan mode changes nothing


ALLOW = Decision("allow", "")


@dataclass
class RuleSet:
    """The rules in effect, in the order they were given, and whether the read-only commands run
    without asking."""

    rules: Sequence[Rule] = ()
    read_only_commands: bool = True

    def first(self, behaviour: Behaviour, matches: Callable[[Rule], bool]) -> Rule | None:
        return next((r for r in self.rules if r.behaviour == behaviour and matches(r)), None)

    def keeps_out(self, path: str) -> bool:
        """Whether a deny or ask rule covers reading `path` (a search walk must not be the way round it)."""
        return any(
            r.behaviour != "allow" and r.matches_path("read_file", "read", Path(path), resolved_only=False)
            for r in self.rules
        )

    def allows_domain(self, names: Sequence[str]) -> Rule | None:
        """The allow rule naming the domain called `names` (a `WebFetch(domain:…)` one: a bare
        `WebFetch` does not count), which also lets it be at a private or local address."""
        return self.first("allow", lambda r: r.domain is not None and any(map(r.matches_domain, names)))

    @property
    def limits_reads(self) -> bool:
        """Whether a deny or ask rule covers some reads (then a command that reads whole folders asks)."""
        return any(
            r.behaviour != "allow" and (r.access == "read" or r.tool in READ_TOOLS) for r in self.rules
        )


@dataclass
class Scope:
    """Where the file tools work freely: the project (and its added folders), the memory folders,
    and the folders a read "always" opened this conversation."""

    project_dirs: tuple[Path, ...]
    memory_dirs: tuple[Path, ...] = ()
    read_folders: set[Path] = field(default_factory=set)

    def holds(self, path: Path, *, reading: bool) -> bool:
        places = [*self.project_dirs, *(self.read_folders if reading else ())]
        return any(path.is_relative_to(place) for place in places)


def rule_reason(rule: Rule) -> str:
    return f"{rule.behaviour} rule {visible_text(rule.text)} in {visible_text(rule.entry.source)}"


def decide_file(
    tool: str, access: Access, path: Path, written: Path, mode: str, rules: RuleSet,
    protections: Protections, scope: Scope,
) -> Decision:  # fmt: skip
    """Whether `tool` may read or write `path` (resolved; named `written`)."""
    if any(path.is_relative_to(folder) for folder in scope.memory_dirs):
        return ALLOW  # the memory writer checks what is written there
    for behaviour in BEHAVIOURS[:2]:
        rule = rules.first(behaviour, lambda r: r.matches_path(tool, access, written, resolved_only=False))
        if rule is not None and behaviour == "deny":
            return Decision("deny", rule_reason(rule), rule)
        if behaviour == "deny" and access == "write" and mode == "plan":
            return Decision("deny", PLAN_REASON, plan=True)
        if rule is not None:
            return Decision("ask", rule_reason(rule), rule)
    if access == "read":
        private = protections.read_reason(path, written)
        if private is not None and mode != "bypass":
            return Decision("ask", private)
    else:
        sensitive = protections.write_reason(path, written)
        if sensitive is not None:
            return Decision("ask", sensitive)
    if mode == "bypass":
        return ALLOW
    if access == "write" and (instructs := protections.edit_reason(path, written)) is not None:
        return Decision("ask", instructs)
    allowed = rules.first("allow", lambda r: r.matches_path(tool, access, path, resolved_only=True))
    if allowed is not None:
        return Decision("allow", rule_reason(allowed), allowed)
    if not scope.holds(path, reading=access == "read"):
        if access == "write":
            return Decision("ask", OUTSIDE_REASON)
        folder = path if path.is_dir() else path.parent
        shown = display_path(folder, scope.project_dirs[0])
        return Decision(
            "ask", OUTSIDE_REASON, always=Always(f"allow reading {shown} this conversation", folder=folder)
        )
    if access == "read" or mode in MODES_THAT_EDIT:
        return ALLOW
    return Decision(
        "ask", EDIT_REASON, always=Always("accept edits for this conversation", accept_edits=True)
    )


def decide_tool(
    tool: str, mode: str, rules: RuleSet, reason: str, *, changes: bool = True, read_only: bool = False
) -> Decision:
    """Whether a tool judged by its name alone may run (an MCP server's, `mcp__server__tool`: a
    rule `mcp__server` covers every tool of that server; the skill tool); "always" saves a rule for
    that one tool. One that `changes` nothing by our own knowledge (the skill tool) runs without a
    rule, in plan mode too. In plan mode, as in Claude Code, one that may change something asks
    even when a rule allows it (where no one can answer, plan mode refuses it); one whose server
    calls it `read_only` is judged as in the default mode: that word is the server's, so it never
    lets a tool run unasked."""
    rule = rules.first("deny", lambda r: r.names_tool(tool))
    if rule is not None:
        return Decision("deny", rule_reason(rule), rule)
    if mode == "plan" and changes and not read_only:
        return Decision("ask", PLAN_TOOL_REASON, plan=True)
    rule = rules.first("ask", lambda r: r.names_tool(tool)) or rules.first(
        "allow", lambda r: r.names_tool(tool)
    )
    if rule is not None:
        return Decision(rule.behaviour, rule_reason(rule), rule)
    if mode == "bypass" or not changes:
        return ALLOW
    return Decision("ask", reason, always=Always(f"allow {tool} in this project", rules=(tool,)))


def decide_fetch(names: Sequence[str], mode: str, rules: RuleSet) -> Decision:
    """Whether web_fetch may read from the host called `names` (its ASCII form first, then as it
    is written in Unicode): the first deny, ask or allow rule naming it, else bypass fetches and
    every other mode asks (plan mode too: a fetch changes nothing here); "always" saves a rule
    for that domain."""
    for behaviour in BEHAVIOURS:
        rule = rules.first(behaviour, lambda r: any(map(r.matches_domain, names)))
        if rule is not None:
            return Decision(behaviour, rule_reason(rule), rule)
    if mode == "bypass":
        return ALLOW
    saved = f"WebFetch(domain:{names[0]})"
    return Decision(
        "ask", f"a web page from {names[0]}", always=Always(f"allow {saved} in this project", rules=(saved,))
    )


def combined(decisions: Sequence[Decision]) -> Decision:
    """Several decisions as one: a deny wins, then an ask (offering "always" only when each
    ask offers it, their rules together), else allow."""
    denied = next((d for d in decisions if d.behaviour == "deny"), None)
    if denied is not None:
        return denied
    asks = [d for d in decisions if d.behaviour == "ask"]
    if not asks:
        return ALLOW
    offers = [d.always for d in asks]
    always = None
    if all(offer is not None and offer.rules for offer in offers):
        saved = tuple(dict.fromkeys(rule for offer in offers if offer is not None for rule in offer.rules))
        always = Always(f"allow {', '.join(saved)} in this project", rules=saved)
    return Decision("ask", asks[0].reason, asks[0].rule, always)
