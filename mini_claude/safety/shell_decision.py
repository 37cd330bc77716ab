"""A shell command judged as bash will run it: every simple command of the line on its own (the
commands of `&&`, `;`, `|`, subshells, `$(…)` and backticks; what `env`, `nohup`, `bash -c` or
`xargs` run), every redirect to a file as a write (or, `<`, a read) under the file rules, and the
paths a read-only command reads under the read rules. What cannot be parsed asks.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from pathlib import Path

from mini_claude.safety.decision import (
    ALLOW,
    PLAN_REASON,
    Access,
    Always,
    Decision,
    RuleSet,
    Scope,
    combined,
    decide_file,
    rule_reason,
)
from mini_claude.safety.protections import Protections
from mini_claude.safety.rules import BEHAVIOURS, SHELL_TOOL, Rule
from mini_claude.safety.shell.parse import Command, ParsedLine, Redirect, parse_line
from mini_claude.safety.shell.read_only import is_read_only
from mini_claude.safety.shell.suggest import suggested_rule
from mini_claude.safety.shell.wrappers import inner_command, shell_script

SHELL_REASON = "run a shell command"
MAX_SCRIPT_DEPTH = 3  # bash -c 'bash -c …' is looked into this deep, then asks
MAX_GLOB_MATCHES = 1_000  # a read-only command's glob matching more asks
# Read-only commands that read whole folders: under a deny or ask rule for reads, they ask.
_RECURSIVE = {"rg": (), "find": (), "tree": (), "du": (), "grep": ("-r", "-R", "--recursive"),
              "ls": ("-R", "--recursive")}  # fmt: skip
_FOLLOWS_LINKS = {"grep": ("-R", "--dereference-recursive"), "rg": ("-L", "--follow"),
                  "find": ("-L", "-follow"), "tree": ("-l",), "du": ("-L", "--dereference")}  # fmt: skip


class ShellJudge:
    """Judges command lines for one project (`cwd`, resolved) with one home."""

    def __init__(self, cwd: Path, home: Path, protections: Protections) -> None:
        self.cwd = cwd
        self.home = home
        self.protections = protections

    def decide(self, line: str, mode: str, rules: RuleSet, scope: Scope) -> Decision:
        return self._decide(line, mode, rules, scope, depth=0)

    def _decide(self, line: str, mode: str, rules: RuleSet, scope: Scope, *, depth: int) -> Decision:
        parsed = parse_line(line, str(self.home))
        texts = list(self._command_texts(parsed, depth))
        raw = " ".join(line.split())
        for behaviour in BEHAVIOURS[:2]:
            rule = next((r for t in [*texts, raw] if (r := _first(rules, behaviour, t)) is not None), None)
            if rule is not None:
                return Decision(behaviour, rule_reason(rule), rule)
        if mode == "plan" and not self._only_reads(parsed, depth):
            return Decision("deny", PLAN_REASON, plan=True)
        if parsed.problems or depth > MAX_SCRIPT_DEPTH:
            if mode == "bypass" and not _limits_commands(rules):
                return ALLOW
            problem = parsed.problems[0] if parsed.problems else "it nests shells too deep to follow"
            return Decision("ask", f"{SHELL_REASON}: it cannot be judged before it runs ({problem})")
        decisions = [self._redirect(r, mode, rules, scope) for r in parsed.redirects]
        decisions += [self._command(c, mode, rules, scope, depth) for c in parsed.commands]
        if mode == "bypass":  # only a rule's refusal holds (a read-only command's paths included)
            unknown = [c for c in parsed.commands if _known_words(c) is None]
            if unknown and _limits_commands(rules):
                return Decision(
                    "ask",
                    f"{SHELL_REASON}: a rule limits commands; {unknown[0].text()} is known only as it runs",
                )
            return combined([d for d in decisions if d.behaviour == "deny"])
        return combined(decisions)

    def _command(self, command: Command, mode: str, rules: RuleSet, scope: Scope, depth: int) -> Decision:
        words = _known_words(command)
        if words is not None:
            script = shell_script(words)
            if script is not None and not command.assignments:
                return self._decide(script, mode, rules, scope, depth=depth + 1)
        if not any(a.changes_what_runs for a in command.assignments):
            if self._allowed(command.text(), words, rules):
                return ALLOW
            if words is not None and rules.read_only_commands and is_read_only(words):
                return self._reads(command, words, mode, rules, scope)
        suggestion = suggested_rule(command)
        always = Always(f"allow {suggestion} in this project", rules=(suggestion,)) if suggestion else None
        return Decision("ask", SHELL_REASON, always=always)

    def _allowed(self, text: str, words: list[str] | None, rules: RuleSet) -> bool:
        if _first(rules, "allow", text) is not None:
            return True
        inner = inner_command(words) if words is not None else None
        while inner is not None and inner.transparent:
            if _first(rules, "allow", " ".join(inner.words)) is not None:
                return True
            inner = inner_command(list(inner.words))
        return False

    def _reads(self, command: Command, words: list[str], mode: str, rules: RuleSet, scope: Scope) -> Decision:
        """A read-only command: allowed when every path it names may be read (judged as read_file)."""
        name = words[0]
        if any(flag in words for flag in _FOLLOWS_LINKS.get(name, ())):
            return Decision("ask", f"{SHELL_REASON}: it follows links while reading folders")
        recursive = name in _RECURSIVE and (not _RECURSIVE[name] or any(f in words for f in _RECURSIVE[name]))
        start = self._folder(command.cwd)
        if start is None:
            return Decision("ask", f"{SHELL_REASON}: it reads after a cd bash alone can follow")
        paths = [Path(os.path.realpath(start / p)) for p in self._path_arguments(command, start)]
        if recursive:
            folders = [p for p in paths if p.is_dir()] or ([start] if name != "ls" else [])
            if rules.limits_reads and folders:
                return Decision("ask", f"{SHELL_REASON}: it reads whole folders, and a rule limits reads")
            if any(self.protections.holds_private(folder) for folder in folders):
                return Decision("ask", f"{SHELL_REASON}: it reads whole folders that hold private files")
        if len(paths) > MAX_GLOB_MATCHES:
            return Decision("ask", f"{SHELL_REASON}: its patterns match over {MAX_GLOB_MATCHES:,} paths")
        return combined(
            [decide_file("read_file", "read", p, p, mode, rules, self.protections, scope) for p in paths]
        )

    def _path_arguments(self, command: Command, start: Path) -> Iterator[str]:
        for word in command.words[1:]:
            text = word.text or ""
            if text.startswith("-"):
                _, equals, value = text.partition("=")
                if not (equals and value.startswith(("/", "~", "."))):
                    continue
                text = value
            yield text
            if word.glob:
                yield from glob.glob(text, root_dir=start)[: MAX_GLOB_MATCHES + 1]

    def _redirect(self, redirect: Redirect, mode: str, rules: RuleSet, scope: Scope) -> Decision:
        start = self._folder(redirect.cwd)
        target = redirect.target
        if start is None or target.text is None or target.glob:
            where = "a file named by an expansion" if start is not None else "a file after a cd"
            return Decision("ask", f"{SHELL_REASON}: it {'writes' if redirect.write else 'reads'} {where}")
        written = start / target.text
        path = Path(os.path.realpath(written))
        access: Access = "write" if redirect.write else "read"
        tool = "write_file" if redirect.write else "read_file"
        decision = decide_file(tool, access, path, written, mode, rules, self.protections, scope)
        if decision.behaviour == "ask" and decision.always is not None and not decision.always.rules:
            decision = Decision("ask", decision.reason, decision.rule)  # "always" here means the command's
        return decision

    def _folder(self, cwd: tuple[str, ...] | None) -> Path | None:
        if cwd is None:
            return None
        folder = self.cwd
        for step in cwd:
            folder = Path(os.path.normpath(folder / os.path.expanduser(step)))
        return folder

    def _command_texts(self, parsed: ParsedLine, depth: int) -> Iterator[str]:
        """Every command the line runs, as deny and ask rules see them (wrapped ones too)."""
        for command in parsed.commands:
            yield command.text()
            words = _known_words(command)
            while words:
                yield from _by_name(words)
                script = shell_script(words)
                if script is not None and depth <= MAX_SCRIPT_DEPTH:
                    yield from self._command_texts(parse_line(script, str(self.home)), depth + 1)
                inner = inner_command(words)
                words = list(inner.words) if inner is not None else None

    def _only_reads(self, parsed: ParsedLine, depth: int) -> bool:
        if parsed.problems or any(r.write for r in parsed.redirects):
            return False
        for command in parsed.commands:
            words = _known_words(command)
            if words is None or any(a.changes_what_runs for a in command.assignments):
                return False
            script = shell_script(words)
            if script is not None:
                if depth >= MAX_SCRIPT_DEPTH or not self._only_reads(
                    parse_line(script, str(self.home)), depth + 1
                ):
                    return False
            elif not is_read_only(words):
                return False
        return True


def _first(rules: RuleSet, behaviour: str, text: str) -> Rule | None:
    return rules.first(behaviour, lambda r: r.tool == SHELL_TOOL and r.matches_command(text))  # type: ignore[arg-type]


def _by_name(words: list[str]) -> Iterator[str]:
    """The command as deny and ask rules see it: as written, and `/bin/rm x` as `rm x` too."""
    yield " ".join(words)
    if "/" in words[0]:
        yield " ".join([os.path.basename(words[0]), *words[1:]])


def _limits_commands(rules: RuleSet) -> bool:
    """Whether a deny or ask rule names shell commands: then a line that cannot be judged is
    not one bypass mode may run (it could be the command the rule names)."""
    return any(rules.first(b, lambda r: r.tool == SHELL_TOOL) is not None for b in BEHAVIOURS[:2])


def _known_words(command: Command) -> list[str] | None:
    """The command's words as the program gets them, or None when one is known only when it runs."""
    if command.name is None or any(w.text is None for w in command.words):
        return None
    return [w.text for w in command.words if w.text is not None]
