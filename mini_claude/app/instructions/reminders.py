"""Instructions that arrive during a conversation, as reminders: a sub-folder's CLAUDE.md (and its
kin) the first time a tool reads or writes a file in that folder, and a rule whose `paths:` match
a file a tool used. Each is given once per conversation; a file the system prompt holds already
is not given again. The system prompt itself never changes mid-conversation (its cache stays
warm): what is found here joins the next request, like recalled memories.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mini_claude.app.instructions.hierarchy import (
    INSTRUCTIONS_TOTAL_MAX_BYTES,
    InstructionSet,
    PathRule,
    add_folder_files,
    cut_note,
    folders_down,
)
from mini_claude.app.instructions.imports import Gathered, Instruction, add_with_imports
from mini_claude.app.instructions.reading import FileText, Places, shown_path
from mini_claude.app.instructions.section import reminder_block
from mini_claude.core import prompts
from mini_claude.core.files import safe_read
from mini_claude.core.paths import display_path
from mini_claude.core.untrusted import attribute

FOLDER_SCOPE = "folder"
# Tools that read or write one file, and the input naming it: what "a tool used a file" means.
FILE_TOOLS = ("read_file", "write_file", "edit_file")
FILE_PARAMETER = "file_path"
RULES_MATCH_BUDGET_S = 0.2  # matching every waiting rule against one file a tool used

Warn = Callable[[str], None]


class InstructionReminders:
    """Follows the files tools use, and holds the reminders they call for until `take`."""

    def __init__(self, cwd: Path, places: Places, warn: Warn) -> None:
        self.cwd = Path(os.path.realpath(cwd))
        self.places = places
        self.warn = warn
        self._lock = threading.Lock()
        self._gathered = Gathered()
        self._rules: list[PathRule] = []
        self._folders: set[Path] = set()
        self._pending: list[dict[str, Any]] = []
        self._given_bytes = 0

    def start(self, loaded: InstructionSet) -> None:
        """A conversation starts with `loaded` in its system prompt: nothing given yet."""
        with self._lock:
            self._gathered = Gathered(seen=set(loaded.seen))
            self._rules = list(loaded.path_rules)
            self._folders, self._pending, self._given_bytes = set(), [], 0

    def tool_used(self, name: str, tool_input: dict[str, Any]) -> None:
        """A tool call succeeded: note the file it read or wrote."""
        raw = tool_input.get(FILE_PARAMETER)
        if name in FILE_TOOLS and isinstance(raw, str) and raw and "\0" not in raw:
            self.file_used(Path(os.path.realpath(os.path.join(self.cwd, os.path.expanduser(raw)))))

    def file_used(self, path: Path) -> None:
        """`path` (resolved) was read or written by a tool."""
        with self._lock:
            for folder in folders_down(self.cwd, path.parent)[1:] if path.is_relative_to(self.cwd) else []:
                if folder not in self._folders:
                    self._folders.add(folder)
                    self._give_folder(folder)
            for rule in self._matching_rules(path):
                self._rules.remove(rule)
                if rule.cut:
                    self.warn(cut_note(rule))
                before = len(self._gathered.found)
                file = FileText(rule.path, rule.text, rule.size, rule.cut)
                add_with_imports(self._gathered, file, rule.text, rule.scope, self.places, kind="rule")
                self._tell_skipped()
                why = prompts.notice("instructions_for_rule", file=attribute(display_path(path, self.cwd)))
                self._give(self._gathered.found[before:], why)

    def take(self) -> list[dict[str, Any]]:
        """The reminders found since the last call (text blocks), for the next request."""
        with self._lock:
            pending, self._pending = self._pending, []
        return pending

    def _matching_rules(self, path: Path) -> list[PathRule]:
        """The waiting rules whose globs match `path`, within RULES_MATCH_BUDGET_S in all."""
        candidates = [rule for rule in self._rules if path.is_relative_to(rule.base)]
        for rule in candidates:
            rule.matcher.compiled()  # once per conversation, outside the budget of a match
        deadline, found = time.monotonic() + RULES_MATCH_BUDGET_S, []
        for rule in candidates:
            try:
                if rule.matcher.matches(path.relative_to(rule.base).as_posix(), deadline):
                    found.append(rule)
            except TimeoutError:
                self.warn(
                    f"The rules' paths: took too long to match {shown_path(path)}: some were not checked"
                )
                break
        return found

    def _tell_skipped(self) -> None:
        for skipped in self._gathered.skipped:
            self.warn(skipped.reason)
        self._gathered.skipped.clear()

    def _give_folder(self, folder: Path) -> None:
        before = len(self._gathered.found)
        add_folder_files(self._gathered, folder, self.places, FOLDER_SCOPE)
        self._tell_skipped()
        entries = self._gathered.found[before:]
        for entry in entries:
            if entry.cut:
                self.warn(cut_note(entry))
        if entries:
            shown = attribute(display_path(folder, self.cwd))
            self._give(entries, prompts.notice("instructions_for_folder", folder=shown))

    def _give(self, entries: list[Instruction], why: str) -> None:
        size = sum(len(entry.text.encode("utf-8", "surrogateescape")) for entry in entries)
        if self._given_bytes + size > INSTRUCTIONS_TOTAL_MAX_BYTES:
            names = ", ".join(shown_path(entry.path) for entry in entries)
            limit = safe_read.format_size(INSTRUCTIONS_TOTAL_MAX_BYTES)
            self.warn(
                f"{names} not given to the model: this conversation's instruction reminders reached {limit}"
            )
            return
        self._given_bytes += size
        self._pending.append(reminder_block(entries, why))
