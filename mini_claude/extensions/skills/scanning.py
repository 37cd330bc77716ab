"""Where skills and custom commands live, and finding them there (Claude Code's places, and our
`.mini-claude` twins, which win over them):

    skills      ~/.claude/skills/NAME/SKILL.md, ~/.mini-claude/skills/NAME/SKILL.md           (user)
                <root>/.claude/skills/NAME/SKILL.md, <root>/.mini-claude/skills/NAME/SKILL.md (project)
    commands    ~/.claude/commands/**.md, ~/.mini-claude/commands/**.md                       (user)
                <root>/.claude/commands/**.md, <root>/.mini-claude/commands/**.md             (project)
    agents      ~/.claude/agents/*.md …, as commands without subfolders (extensions/agents)

A command in a subfolder is namespaced by it: `.claude/commands/frontend/component.md` is
`/frontend:component`. Each place is looked into with a budget, so a folder of a million entries
costs no more than a small one; what is over it is said once.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mini_claude.core.config import app_home
from mini_claude.extensions.skills.entries import Scope

SKILL_FILE = "SKILL.md"
COMMAND_SUFFIX = ".md"
FOLDERS = (".claude", ".mini-claude")  # a later one wins a name both have
ENTRIES_MAX = 1_000  # looked at in one place (its subfolders included)
FOUND_MAX = 200  # skills or commands taken from one place
NAMESPACE_DEPTH = 3  # subfolders of a commands folder looked into
Kind = Literal["skill", "command", "agent"]  # an agent is a file directly in its folder


@dataclass(frozen=True)
class Place:
    kind: Kind
    folder: Path  # ~/.claude/skills, <root>/.mini-claude/commands…
    scope: Scope
    root: Path  # where what it holds must resolve: the project root, or `/` for the user's own
    shown: str  # ~/.claude/skills, .claude/commands


@dataclass(frozen=True)
class Found:
    path: Path  # the SKILL.md or the command file (it may be missing: a skill folder without one)
    name: str  # the folder's name for a skill, `ns:name` for a command (lowercased)
    source: str  # as shown: ~/.claude/skills/review/SKILL.md


def places(kind: Kind, root: Path, home: Path) -> list[Place]:
    """The places of `kind`, the one that wins a name first: the user's (ours, then Claude Code's),
    then the project's (ours, then Claude Code's)."""
    sub = f"{kind}s"
    user = [(app_home(), f"~/.mini-claude/{sub}"), (home / ".claude", f"~/.claude/{sub}")]
    project = [(root / folder, f"{folder}/{sub}") for folder in reversed(FOLDERS)]
    return [
        *(Place(kind, base / sub, "user", Path("/"), shown) for base, shown in user),
        *(Place(kind, base / sub, "project", root, shown) for base, shown in project),
    ]


def find(place: Place) -> tuple[list[Found], str | None]:
    """What `place` holds (sorted by name), and a line when its budget was not enough."""
    found: list[Found] = []
    for looked, (path, parts) in enumerate(_walk(place), start=1):
        if looked > ENTRIES_MAX:
            return found, f"{place.shown}: more than {ENTRIES_MAX:,} entries; only the first were looked at"
        if place.kind == "skill":
            found.append(
                Found(path / SKILL_FILE, path.name.lower(), f"{place.shown}/{path.name}/{SKILL_FILE}")
            )
        elif path.name.endswith(COMMAND_SUFFIX):
            name = ":".join([*parts, path.name.removesuffix(COMMAND_SUFFIX)]).lower()
            found.append(Found(path, name, "/".join([place.shown, *parts, path.name])))
        if len(found) > FOUND_MAX:
            return found[:FOUND_MAX], f"{place.shown}: more than {FOUND_MAX}; only the first were taken"
    return sorted(found, key=lambda item: item.name), None


def _walk(place: Place) -> Iterator[tuple[Path, list[str]]]:
    """Skill folders (directly in the place), or command files (in it and its subfolders), in
    name order, each with the subfolders on its way. A symlinked subfolder of a commands folder
    is not entered (a namespace that loops); a skill folder may be a symlink (reading judges it)."""
    stack: list[tuple[Path, list[str]]] = [(place.folder, [])]
    while stack:
        folder, parts = stack.pop(0)
        try:
            with os.scandir(folder) as scan:
                entries = sorted(itertools.islice(scan, ENTRIES_MAX + 1), key=lambda entry: entry.name)
        except OSError:  # missing, not a folder, unreadable: nothing there
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if place.kind == "skill":
                if _is_dir(entry, follow=True):
                    yield Path(entry.path), parts
            elif _is_dir(entry, follow=False):
                if place.kind == "command" and len(parts) < NAMESPACE_DEPTH:
                    stack.append((Path(entry.path), [*parts, entry.name]))
            else:
                yield Path(entry.path), parts


def _is_dir(entry: os.DirEntry[str], *, follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False
