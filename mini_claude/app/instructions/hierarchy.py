"""Which instruction files a conversation starts with, most general first, each under its own path:

1. the user's: `~/.claude/CLAUDE.md`, then `~/.mini-claude/CLAUDE.md`, then their `rules/`;
2. each folder from the project root (the top of the git work tree) down to the working directory:
   its `CLAUDE.md`, `.claude/CLAUDE.md` and `CLAUDE.local.md` (or, when it has none of these,
   its `AGENTS.md`), then its `.claude/rules/` and `.mini-claude/rules/`.

Every file is followed by what it imports. Rules with `paths:` wait for a matching file (see
reminders.py). All together they are capped at INSTRUCTIONS_TOTAL_MAX_BYTES: past it the most
specific (latest) files win, and the rest are left out with a line saying so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.app.instructions.imports import Gathered, Instruction, Skipped, add_with_imports
from mini_claude.app.instructions.reading import (
    INSTRUCTION_FILE_MAX_BYTES,
    Chosen,
    Places,
    places_for,
    shown_path,
    user_instruction_homes,
)
from mini_claude.app.instructions.rules import (
    RULES_FOLDERS,
    RULES_MAX_FILES,
    RuleGlobs,
    parse_rule,
    rule_files,
)
from mini_claude.core import prompts
from mini_claude.core.config import git_work_tree_root, protected_dirs
from mini_claude.core.files import safe_read

INSTRUCTIONS_FILE = "CLAUDE.md"
# A folder's files and their scope; `local` is the user's own (not committed: /init offers to
# add it to .gitignore).
FOLDER_FILES = (
    (INSTRUCTIONS_FILE, "project"),
    (".claude/CLAUDE.md", "project"),
    ("CLAUDE.local.md", "local"),
)
FALLBACK_FILE = "AGENTS.md"  # Codex's and others' name, used where a folder has none of the above
INSTRUCTIONS_TOTAL_MAX_BYTES = 100_000  # about 25,000 tokens: every file of a conversation's start


@dataclass(frozen=True)
class PathRule:
    """A rule with `paths:` globs, given to the model once a tool touches a matching file."""

    path: Path
    scope: str
    base: Path  # the globs are relative to this folder (resolved)
    globs: tuple[str, ...]
    matcher: RuleGlobs
    text: str  # its body, as read when the conversation started
    size: int
    cut: bool


@dataclass
class InstructionSet:
    loaded: list[Instruction] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    left_out: list[Instruction] = field(default_factory=list)  # past the total cap
    path_rules: list[PathRule] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one line each for the user (a file cut, …)
    seen: set[Path] = field(default_factory=set)  # every real path read


def project_places(cwd: Path) -> Places:
    real_cwd = Path(os.path.realpath(cwd))
    return places_for(git_work_tree_root(real_cwd) or real_cwd, Path.home(), tuple(protected_dirs()))


def load_instructions(cwd: Path, places: Places | None = None) -> InstructionSet:
    """The instruction files a conversation in `cwd` starts with (see the module doc)."""
    places = places or project_places(cwd)
    gathered, path_rules, notes = Gathered(), list[PathRule](), list[str]()
    homes = user_instruction_homes(places.home)
    for folder in homes:
        add_file(gathered, folder / INSTRUCTIONS_FILE, "user", places, "user")
    for folder in homes:
        notes += _add_rules(gathered, path_rules, folder / "rules", places.root, "user", places, "user")
    for folder in folders_down(places.root, Path(os.path.realpath(cwd))):
        add_folder_files(gathered, folder, places)
        for rules in RULES_FOLDERS:
            notes += _add_rules(gathered, path_rules, folder / rules, folder, "project", places, "project")
    loaded, left_out = _within_total(gathered.found)
    notes += [*gathered.decoding, *(cut_note(entry) for entry in loaded if entry.cut)]
    if left_out:
        names = ", ".join(shown_path(entry.path) for entry in left_out)
        notes.append(
            f"Instructions over {safe_read.format_size(INSTRUCTIONS_TOTAL_MAX_BYTES)} in all: left out "
            f"{names} (the most general); shorten them to have them read"
        )
    return InstructionSet(loaded, gathered.skipped, left_out, path_rules, notes, gathered.seen)


def folders_down(root: Path, cwd: Path) -> list[Path]:
    """`root`, then each folder on the way down to `cwd` (which must lie within it)."""
    if not cwd.is_relative_to(root):
        return [cwd]
    parts = cwd.relative_to(root).parts
    return [root.joinpath(*parts[:count]) for count in range(len(parts) + 1)]


def add_folder_files(gathered: Gathered, folder: Path, places: Places, scope: str | None = None) -> None:
    """A folder's CLAUDE.md, .claude/CLAUDE.md and CLAUDE.local.md, or its AGENTS.md when it has
    none of those; `scope` instead of each file's own (a sub-folder's files are "folder")."""
    present = [(name, own) for name, own in FOLDER_FILES if os.path.lexists(folder / name)]
    if not present and os.path.lexists(folder / FALLBACK_FILE):
        present = [(FALLBACK_FILE, "project")]
    for name, own in present:
        add_file(gathered, folder / name, scope or own, places, "project")


def add_file(gathered: Gathered, path: Path, scope: str, places: Places, chosen: Chosen) -> None:
    file = gathered.read(path, places, chosen)
    if file is not None:
        add_with_imports(gathered, file, with_cut_notice(file.text, path, file.cut), scope, places)


def with_cut_notice(text: str, path: Path, cut: bool) -> str:
    text = text.strip()
    if cut:
        text += "\n" + prompts.notice(
            "instructions_cut", name=path.name, max_bytes=INSTRUCTION_FILE_MAX_BYTES
        )
    return text


def cut_note(entry: Instruction | PathRule) -> str:
    limit = safe_read.format_size(INSTRUCTION_FILE_MAX_BYTES)
    return (
        f"{shown_path(entry.path)} is {safe_read.format_size(entry.size)}: only its first {limit} "
        "are used; keep it shorter"
    )


def _add_rules(
    gathered: Gathered, path_rules: list[PathRule], folder: Path, base: Path, scope: str,
    places: Places, chosen: Chosen,
) -> list[str]:  # fmt: skip
    """The rules in `folder`: always-loaded ones into `gathered`, the others into `path_rules`;
    returns the lines the user should see about them."""
    files, more = rule_files(folder)
    notes = [f"{shown_path(folder)} holds more than {RULES_MAX_FILES} rules: the rest are not read"] * more
    for path in files:
        file = gathered.read(path, places, chosen)
        if file is None:
            continue
        rule = parse_rule(file.text)
        if rule.problem is not None:
            notes.append(f"{shown_path(path)}: {rule.problem}")
        body = with_cut_notice(rule.body, path, file.cut)
        if rule.globs:
            real_base = Path(os.path.realpath(base))
            path_rules.append(
                PathRule(path, scope, real_base, rule.globs, RuleGlobs(rule.globs), body, file.size, file.cut)
            )
        elif body:
            add_with_imports(gathered, file, body, scope, places, kind="rule")
    return notes


def _within_total(found: list[Instruction]) -> tuple[list[Instruction], list[Instruction]]:
    """(kept, left out): the latest files that fit INSTRUCTIONS_TOTAL_MAX_BYTES together, and the
    earlier ones from the first that does not fit."""
    total = 0
    for index in range(len(found) - 1, -1, -1):
        total += len(found[index].text.encode("utf-8", "surrogateescape"))
        if total > INSTRUCTIONS_TOTAL_MAX_BYTES:
            return found[index + 1 :], found[: index + 1]
    return found, []
