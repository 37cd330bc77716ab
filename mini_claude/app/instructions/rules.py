"""Rules: Markdown files in `.claude/rules/` (and `.mini-claude/rules/`), subfolders included. A
rule without `paths:` in its frontmatter is always loaded; one with `paths:` globs only once a tool
touches a matching file. The globs are Claude Code's: relative to the folder holding `.claude`
(the project root for the user's `~/.claude/rules/`), `*`, `**`, `?`, `[…]`, `{a,b}`; one without
a `/` matches the name at any depth, as in .gitignore.

    ---
    paths:
      - "src/api/**/*.ts"
      - "tests/**/*.test.ts"
    ---
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.core.errors import ToolError
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.frontmatter.block import locate_block
from mini_claude.core.frontmatter.fields import split_list
from mini_claude.tools.patterns import compile_glob

RULES_FOLDERS = (".claude/rules", ".mini-claude/rules")
RULE_SUFFIX = ".md"
RULES_MAX_FILES = 100  # per rules folder; more are left out with a line
RULES_MAX_DEPTH = 4  # subfolders of a rules folder looked into
RULES_MAX_ENTRIES = 2_000  # entries of a rules folder and its subfolders looked at
GLOBS_MAX = 50  # per rule
GLOB_MAX_CHARS = 300
GLOB_MATCH_TIMEOUT_S = 0.05  # a glob from a cloned repository must not stall a tool call
# A quoted value (kept whole: `"issue #12/*"` names a folder) or a YAML comment after a plain one.
_QUOTED_OR_COMMENT = re.compile(r"""(?<![^\s\[,])("(?:[^"\\\r\n]|\\.)*"|'(?:[^'\r\n]|'')*')|[ \t]#[^\r\n]*""")


@dataclass(frozen=True)
class RuleText:
    body: str  # the text after the frontmatter
    globs: tuple[str, ...]  # empty: always loaded
    problem: str | None = None  # why some of `paths:` was not usable


def rule_files(folder: Path) -> tuple[list[Path], bool]:
    """The `.md` files in a rules folder and its subfolders (a symlinked subfolder is not
    entered), in name order, at most RULES_MAX_FILES; and whether more were left out. At most
    RULES_MAX_ENTRIES entries are looked at: a folder of a million files costs no more."""
    found: list[Path] = []
    stack, looked = [(folder, 0)], 0
    while stack:
        current, depth = stack.pop()
        try:
            with os.scandir(current) as scan:
                entries = []
                for entry in scan:
                    looked += 1
                    if looked > RULES_MAX_ENTRIES:
                        return sorted(found)[:RULES_MAX_FILES], True
                    entries.append(entry)
        except OSError:  # missing, not a folder, unreadable: no rules there
            continue
        for entry in sorted(entries, key=lambda entry: entry.name, reverse=True):
            if entry.is_dir(follow_symlinks=False):
                if depth < RULES_MAX_DEPTH:
                    stack.append((Path(entry.path), depth + 1))
            elif entry.name.endswith(RULE_SUFFIX):
                found.append(Path(entry.path))
    return sorted(found)[:RULES_MAX_FILES], len(found) > RULES_MAX_FILES


def parse_rule(text: str) -> RuleText:
    """The rule's body and its `paths:` globs (a list, a `[…]` list, or one value, commas
    separating several); a block without `paths:` leaves the rule always loaded."""
    block = locate_block(text, at_eof=True)
    if block.status != "closed":
        return RuleText(text, ())
    head = _QUOTED_OR_COMMENT.sub(lambda found: found.group(1) or "", text[: block.inner_end])
    parsed = frontmatter.parse(head + text[block.inner_end :])
    raw = [
        value.strip()
        for key in ("paths", "globs")
        for value in parsed.lists.get(key) or split_list(parsed.fields.get(key, ""))
    ]
    globs = [glob for glob in raw if glob]
    problem = None
    if len(globs) > GLOBS_MAX:
        problem, globs = f"more than {GLOBS_MAX} paths: the rest are ignored", globs[:GLOBS_MAX]
    long = [glob for glob in globs if len(glob) > GLOB_MAX_CHARS]
    if long:
        problem = f"a path longer than {GLOB_MAX_CHARS} characters is ignored"
        globs = [glob for glob in globs if len(glob) <= GLOB_MAX_CHARS]
    if raw and not globs:
        problem = problem or "its paths: names no file pattern: it is loaded always"
    return RuleText(parsed.body, tuple(globs), problem)


class RuleGlobs:
    """A rule's globs, compiled when first needed; `matches` takes a path relative to the rule's
    folder and gives up (no match) at `deadline` (time.monotonic()): globs built to backtrack
    cannot stall a tool call."""

    def __init__(self, globs: tuple[str, ...]) -> None:
        self.globs = globs
        self._patterns: list[Any] | None = None

    def matches(self, relative: str, deadline: float) -> bool:
        for pattern in self.compiled():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            try:
                if pattern.fullmatch(relative, timeout=min(remaining, GLOB_MATCH_TIMEOUT_S)) is not None:
                    return True
            except TimeoutError:
                continue
        return False

    def compiled(self) -> list[Any]:
        """The globs as patterns (compiled the first time: the regex library is imported then)."""
        if self._patterns is None:
            self._patterns = []
            for glob in self.globs:
                anchored = glob.removeprefix("./").removeprefix("/")
                if "/" not in anchored.rstrip("/"):
                    anchored = "**/" + anchored  # a bare name matches at any depth, as in .gitignore
                if anchored.endswith("/"):
                    anchored += "**"
                with contextlib.suppress(ToolError):  # an unusable glob matches nothing
                    self._patterns.append(compile_glob(anchored, "paths"))
        return self._patterns
