"""A skill or custom command as found on disk (`Entry`), or why a file could not be one (`Broken`),
and the checks of its frontmatter: Claude Code's keys `name`, `description`, `argument-hint`,
`model`, `allowed-tools`, `disable-model-invocation`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mini_claude.core.frontmatter.codec import Frontmatter
from mini_claude.core.frontmatter.fields import split_list
from mini_claude.core.frontmatter.scalars import split_outside
from mini_claude.core.untrusted import visible_text
from mini_claude.safety.rules import RuleEntry, RuleError, parse_rule

Kind = Literal["skill", "command"]
Scope = Literal["user", "project"]
# A namespaced command's name has a part per folder: `frontend:component`.
NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}(?::[a-z][a-z0-9_-]{0,63}){0,3}")
NAME_RULE = "a lowercase letter, then lowercase letters, digits, - and _ (at most 64)"
DESCRIPTION_MAX_CHARS = 1024
HINT_MAX_CHARS = 200
COMMAND_DESCRIPTION_CHARS = 100  # a command without one is described by its first line, cut
ALLOWED_TOOLS_MAX = 50
TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0", "")


@dataclass(frozen=True)
class Entry:
    kind: Kind
    name: str  # as typed after the slash: `review`, `frontend:component`
    description: str
    path: Path  # the SKILL.md or the command's .md, as found
    source: str  # as the user is shown it: `~/.claude/skills/review/SKILL.md`
    scope: Scope
    root: Path  # where its file must resolve: the project, or `/` for the user's own
    argument_hint: str = ""
    model: str | None = None
    allowed_tools: tuple[str, ...] = ()
    model_invocable: bool = True  # skills only: false with `disable-model-invocation: true`
    notes: tuple[str, ...] = field(default=(), compare=False)  # what was wrong but not fatal

    @property
    def folder(self) -> Path:
        return self.path.parent


@dataclass(frozen=True)
class Broken:
    source: str
    reason: str  # one line


def entry_from(
    kind: Kind, name: str, header: Frontmatter, first_line: str, *, path: Path, source: str, scope: Scope,
    root: Path,
) -> Entry | Broken:  # fmt: skip
    """The entry a file's frontmatter describes (`name` is the one its place gives it), or why not."""
    fields, notes = header.fields, [f"frontmatter {warning}" for warning in header.warnings[:2]]
    if kind == "skill" and fields.get("name"):
        name = fields["name"]
    if not NAME.fullmatch(name):
        return Broken(source, f"its name {visible_text(name)[:70]!r} must be {NAME_RULE}")
    description = fields.get("description", "")
    if not description and kind == "skill":
        why = f" ({notes[0]})" if notes else ""
        return Broken(
            source, f"no description in its frontmatter: the model could not know when to use it{why}"
        )
    if not description:
        description = first_line[:COMMAND_DESCRIPTION_CHARS]
    if len(description) > DESCRIPTION_MAX_CHARS:
        notes.append(f"description cut to {DESCRIPTION_MAX_CHARS:,} characters")
        description = description[: DESCRIPTION_MAX_CHARS - 1] + "…"
    tools = tool_list(header, "allowed-tools")
    if len(tools) > ALLOWED_TOOLS_MAX:
        notes.append(f"allowed-tools: only the first {ALLOWED_TOOLS_MAX} are used")
    tools = _valid_rules(tools[:ALLOWED_TOOLS_MAX], root, notes)
    invocable = True
    flag = fields.get("disable-model-invocation", "").lower()
    if flag in TRUE_WORDS:
        invocable = False
    elif flag not in FALSE_WORDS:
        notes.append(
            f"disable-model-invocation {visible_text(flag)[:20]!r} must be true or false: taken as false"
        )
    model = fields.get("model") or None
    if model is not None and (any(c.isspace() for c in model) or model == "inherit"):
        model = None  # `inherit` (Claude Code's word for the session's model), or no model name
    return Entry(
        kind, name, description, path, source, scope, root,
        argument_hint=fields.get("argument-hint", "")[:HINT_MAX_CHARS],
        model=model,
        allowed_tools=tools,
        model_invocable=invocable and kind == "skill",
        notes=tuple(notes),
    )  # fmt: skip


def tool_list(header: Frontmatter, key: str) -> tuple[str, ...]:
    """A tool list as Claude Code files write it: a block list, `[a, b]`, `a, b`, or (the Agent
    Skills way) `a b`; spaces inside a rule's parentheses stay (`Bash(git diff:*)`)."""
    if key in header.lists:
        return header.lists[key]
    value = header.fields.get(key, "").strip()
    if not value:
        return ()
    if "," in value or value.startswith("["):
        return tuple(split_list(value))
    return tuple(_space_separated(value))


def _valid_rules(texts: tuple[str, ...], root: Path, notes: list[str]) -> tuple[str, ...]:
    """The `allowed-tools` that are permission rules (as the settings files' are read); a note
    for each that is not, which is skipped."""
    valid = []
    for text in texts:
        try:
            parse_rule(RuleEntry(text, "allow", "allowed-tools", root), root)
        except RuleError as error:
            notes.append(f"{error} (skipped)")
            continue
        valid.append(text)
    return tuple(valid)


def _space_separated(value: str) -> list[str]:
    return split_outside(value, str.isspace, "()")
