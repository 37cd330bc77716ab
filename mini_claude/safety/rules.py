"""Permission rules in Claude Code's syntax, parsed from plain values: `Tool`, `Bash(npm test:*)`,
`Bash(git status)`, `Read(./secrets/**)`, `Edit(src/**)`, `WebFetch(domain:example.com)`,
`mcp__server`, `mcp__server__tool`. Claude Code's tool names are aliases of ours
(safety/tool_names.py).

A rule comes as a `RuleEntry` — its text, allow/ask/deny, the file (or flag) it came from and
the folder its relative paths start from — so whoever reads settings files needs to know
nothing more about rules; a rule that does not parse is a `RuleError`, one line naming its file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mini_claude.core.config_sources import RuleKind
from mini_claude.core.untrusted import visible_text
from mini_claude.safety.rule_paths import PathPattern, compile_path_pattern
from mini_claude.safety.tool_names import CLAUDE_NAMES, TOOL_ALIASES

Behaviour = RuleKind
BEHAVIOURS: tuple[Behaviour, ...] = ("deny", "ask", "allow")  # the order they are consulted in
READ_TOOLS = ("read_file", "list_files", "grep_search")
WRITE_TOOLS = ("write_file", "edit_file")
SHELL_TOOL = "run_shell"
OUR_TOOLS = frozenset(CLAUDE_NAMES)  # Claude Code's names for them: safety/tool_names.py
# Claude Code's other tools: a rule naming one is kept (a settings file shared with it stays
# valid) and matches nothing here.
OTHER_CLAUDE_TOOLS = frozenset(
    {
        "WebSearch",
        "NotebookEdit",
        "NotebookRead",
        "TodoWrite",
        "BashOutput",
        "KillShell",
        "KillBash",
        "SlashCommand",
    }
)
# A path specifier names what every file tool of that kind reads or writes, as in Claude Code.
_PATH_ACCESS = {"Read": "read", "Edit": "write", "Write": "write", "MultiEdit": "write",
                "read_file": "read", "edit_file": "write", "write_file": "write"}  # fmt: skip
_RULE = re.compile(r"(?P<tool>[A-Za-z_][\w*-]*)(?:\((?P<spec>.*)\))?", re.DOTALL)
_MCP = re.compile(r"mcp__[\w-]+(__[\w*-]+)?")


class RuleError(ValueError):
    """A rule that does not parse; the message is one line naming where it came from."""


@dataclass(frozen=True)
class RuleEntry:
    """One rule as a settings file (or a flag) gives it: plain values."""

    text: str
    behaviour: Behaviour
    source: str  # the file it came from, or the flag ("--allowedTools")
    base: Path  # the project folder its relative paths (`./x`, `/x`, `x`) start from


@dataclass(frozen=True)
class Rule:
    entry: RuleEntry
    tool: str  # our tool name, an MCP name (pattern), or a Claude Code tool we lack
    command: re.Pattern[str] | None = None  # Bash(…)
    path: PathPattern | None = None  # Read(…), Edit(…), Write(…), Glob(…), Grep(…), LS(…)
    access: Literal["read", "write"] | None = None  # which file accesses a path rule covers
    domain: str | None = None  # WebFetch(domain:…)

    @property
    def behaviour(self) -> Behaviour:
        return self.entry.behaviour

    @property
    def text(self) -> str:
        return self.entry.text

    def names_tool(self, tool: str) -> bool:
        """Whether a rule without a specifier covers every use of `tool`."""
        if self.tool.startswith("mcp__"):
            pattern = self.tool.replace("*", "[\\w-]*")
            return (
                re.fullmatch(pattern + ("(__[\\w-]+)?" if self.tool.count("__") == 1 else ""), tool)
                is not None
            )
        return self.tool == tool

    @property
    def bare(self) -> bool:
        return self.command is None and self.path is None and self.domain is None

    def matches_command(self, text: str) -> bool:
        return self.tool == SHELL_TOOL and (
            self.bare or (self.command is not None and self.command.fullmatch(text) is not None)
        )

    def matches_path(self, tool: str, access: str, path: Path, *, resolved_only: bool) -> bool:
        if self.path is None:
            return self.bare and self.tool == tool
        covers = self.access == access if self.access is not None else self.tool == tool
        return covers and self.path.matches(path, resolved_only=resolved_only)

    def matches_domain(self, host: str) -> bool:
        if self.tool != "web_fetch":
            return False
        if self.domain is None:
            return self.bare
        host = host.lower().rstrip(".")
        return host == self.domain or (self.domain.startswith("*.") and host.endswith(self.domain[1:]))


def parse_rule(entry: RuleEntry, home: Path) -> Rule:
    """`entry` as a Rule; RuleError (one line: the file, the rule and what is wrong) when it
    does not parse."""
    text = entry.text.strip()
    match = _RULE.fullmatch(text)
    if not text or match is None:
        raise _error(entry, "expected Tool or Tool(specifier), like Bash(npm test:*) or Read(./src/**)")
    name, spec = match.group("tool"), match.group("spec")
    if name.startswith("mcp__"):
        if spec is not None or not _MCP.fullmatch(name):
            raise _error(entry, "an MCP rule is mcp__server or mcp__server__tool, without parentheses")
        return Rule(entry, name)
    tool = TOOL_ALIASES.get(name, name)
    if tool not in OUR_TOOLS and name not in OTHER_CLAUDE_TOOLS:
        known = ", ".join(sorted({*TOOL_ALIASES, *sorted(OUR_TOOLS)}))
        raise _error(entry, f"no tool is called {name} (known: {known})")
    if spec is None or (spec.strip() in ("", "*") and tool == SHELL_TOOL):
        if spec is not None and not spec.strip():
            raise _error(entry, "the parentheses are empty: leave them out to name every use of the tool")
        return Rule(entry, tool)
    if tool == SHELL_TOOL:
        return Rule(entry, tool, command=_command_pattern(entry, spec))
    if tool == "web_fetch":
        if not spec.startswith("domain:") or not spec[len("domain:") :].strip():
            raise _error(entry, "WebFetch takes domain:HOST, like WebFetch(domain:example.com)")
        return Rule(entry, tool, domain=spec[len("domain:") :].strip().lower().rstrip("."))
    if tool in READ_TOOLS or tool in WRITE_TOOLS:
        if not spec.strip():
            raise _error(entry, "the parentheses are empty: leave them out to name every use of the tool")
        try:
            pattern = compile_path_pattern(spec.strip(), entry.base, home)
        except ValueError as problem:
            raise _error(entry, str(problem)) from None
        return Rule(entry, tool, path=pattern, access=_PATH_ACCESS.get(name))  # type: ignore[arg-type]
    raise _error(entry, f"{name} takes no specifier here: name it alone")


def _command_pattern(entry: RuleEntry, spec: str) -> re.Pattern[str]:
    """`npm test:*` and `npm test *` match `npm test` and `npm test ANYTHING` (not `npm tests`);
    `ls*` matches `lsof` too; any other `*` matches any text; without one, the exact command."""
    spec = " ".join(spec.split())  # as commands are matched: words joined by one space
    if spec.find(":*") not in (-1, len(spec) - 2):
        raise _error(entry, ":* is only allowed at the end (use * elsewhere)")
    if spec.endswith(":*"):
        spec = spec[:-2] + " *"
    if spec.endswith(" *") and spec.count("*") == 1:
        # One `*`, after a space, at the end: the arguments are optional (`ls *` matches `ls`).
        return re.compile(re.escape(spec[:-2]) + "(?: .*)?", re.DOTALL)
    return re.compile(".*".join(re.escape(piece) for piece in spec.split("*")), re.DOTALL)


def _error(entry: RuleEntry, problem: str) -> RuleError:
    where = visible_text(entry.source)
    return RuleError(
        f"{where}: {entry.behaviour} rule {visible_text(repr(entry.text))} is not valid: {problem}"
    )
