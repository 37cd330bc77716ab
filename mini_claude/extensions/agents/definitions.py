"""Sub-agent types: the built-in `explore` and `general`, and custom ones from Claude Code's agent
files (and our `.mini-claude` twins, which win a name both have; a project's win over the user's):

    ~/.claude/agents/*.md, ~/.mini-claude/agents/*.md                 (user)
    <root>/.claude/agents/*.md, <root>/.mini-claude/agents/*.md       (project)

Frontmatter `name`, `description`, `tools` (a comma list or a YAML list, Claude Code's names or
ours; none: the main agent's tools), `model` (`inherit`, or a model name); the body is the
agent's system prompt. A file only ever narrows what its agent may do (its tools are a subset,
judged by the same permission rules), so a project's files need no folder trust.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mini_claude.core.untrusted import visible_text
from mini_claude.extensions.skills.entries import tool_list
from mini_claude.extensions.skills.reading import NotReadable, read_body, read_header
from mini_claude.extensions.skills.scanning import find, places
from mini_claude.safety.tool_names import our_name

Scope = Literal["built-in", "user", "project"]
FILES_MAX = 100  # agent files taken from one folder
DESCRIPTION_MAX_CHARS = 1_000
NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
NAME_RULE = "lowercase letters, digits, - and _ (at most 64)"
EXPLORE, GENERAL = "explore", "general"
# Claude Code's names for its built-in types, taken as ours.
BUILT_IN_ALIASES = {"Explore": EXPLORE, "general-purpose": GENERAL}


@dataclass(frozen=True)
class AgentType:
    name: str
    description: str
    scope: Scope
    source: str  # as shown: built-in, ~/.claude/agents/review.md
    tools: tuple[str, ...] | None = None  # our tool names; None: all the main agent's
    model: str | None = None  # None: the session's model
    path: Path | None = None  # its file, whose body is its system prompt
    root: Path = Path("/")  # where its file must resolve
    notes: tuple[str, ...] = ()  # what in the file was not used

    def system_prompt(self) -> str:
        """Its file's body (read when it runs, so an edit counts); NotReadable when it cannot be."""
        assert self.path is not None
        return read_body(self.path, self.root)


@dataclass(frozen=True)
class BrokenAgent:
    source: str
    reason: str  # one line


def built_in_types() -> list[AgentType]:
    return [
        AgentType(EXPLORE, "Searches and reads the code to answer a question; read-only tools; "
                  "reports back concisely with file paths.", "built-in", "built-in"),
        AgentType(GENERAL, "A general agent with the same tools and permission rules as you, for a "
                  "self-contained task in a fresh context.", "built-in", "built-in"),
    ]  # fmt: skip


def find_types(root: Path, home: Path) -> tuple[list[AgentType], list[BrokenAgent]]:
    """Every type by name (the built-ins first; a custom type never takes a built-in's name), and
    the files that cannot be used, with why."""
    chosen = {kind.name: kind for kind in built_in_types()}
    broken: list[BrokenAgent] = []
    every = places("agent", root, home)  # the user's, then the project's: ours first in each
    for place in [place for scope in ("project", "user") for place in every if place.scope == scope]:
        for item in find(place)[0][:FILES_MAX]:  # the first place to have a name wins it
            found = _read(item.path, item.source, place.scope, place.root)
            if isinstance(found, BrokenAgent):
                broken.append(found)
            elif chosen.get(found.name, found).scope == "built-in":
                broken.append(BrokenAgent(found.source, f"{found.name} is a built-in agent's name"))
            else:
                chosen.setdefault(found.name, found)
    return list(chosen.values()), broken


def _read(path: Path, source: str, scope: Scope, root: Path) -> AgentType | BrokenAgent:
    try:
        header = read_header(path, root)
    except FileNotFoundError:
        return BrokenAgent(source, "it is gone (or a broken symlink)")
    except NotReadable as why:
        return BrokenAgent(source, str(why))
    fields = header.frontmatter.fields
    notes = [f"frontmatter {warning}" for warning in header.frontmatter.warnings[:2]]
    name = fields.get("name", "").strip()
    if not name:
        return BrokenAgent(source, "no name in its frontmatter" + (f" ({notes[0]})" if notes else ""))
    if not NAME.fullmatch(name):
        return BrokenAgent(source, f"its name {visible_text(name)[:70]!r} must be {NAME_RULE}")
    description = fields.get("description", "").strip()
    if not description:
        return BrokenAgent(
            source, "no description in its frontmatter: the model could not know when to use it"
        )
    listed = tool_list(header.frontmatter, "tools")
    model = fields.get("model", "").strip() or None
    if model is not None and (model == "inherit" or any(c.isspace() for c in model)):
        model = None
    return AgentType(
        name, description[:DESCRIPTION_MAX_CHARS], scope, source,
        tools=tuple(dict.fromkeys(our_name(tool.strip()) for tool in listed)) if listed else None,
        model=model, path=path, root=root, notes=tuple(notes),
    )  # fmt: skip
