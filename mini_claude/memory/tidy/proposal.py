"""A tidy's proposal: the file changes the model suggested (created, changed, deleted), each with
its reason, checked by the rules of every memory write before anyone sees them.

What is checked here is checked again when the changes are applied (memory/tidy/apply.py): the
folder may have changed in between, and the user may take only some of the changes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from mini_claude.core.files import safe_read
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.paths import visible_path
from mini_claude.memory.recall.selection import MEMORY_CONTENT_MAX_BYTES
from mini_claude.memory.store.index import clean_inline
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import INDEX_FILE, is_memory_file_name, memory_file_name, name_key
from mini_claude.memory.store.reverting import digest_of
from mini_claude.memory.store.trash import COPY_MAX_BYTES
from mini_claude.memory.store.validation import memory_problem
from mini_claude.memory.tidy.answers import RawChange
from mini_claude.safety.secrets.check import find_secret

log = logging.getLogger("mini_claude")

Action = Literal["create", "change", "delete"]
ACTIONS: tuple[Action, ...] = ("create", "change", "delete")
# A memory tidy writes is at most what recall hands the model whole: a longer one would be cut.
TIDY_MEMORY_MAX_BYTES = MEMORY_CONTENT_MAX_BYTES
TIDY_READ_MAX_BYTES = 8192  # of a memory tidy reads; a longer one may be deleted, not rewritten
REASON_MAX_CHARS = 300
NO_REASON = "(no reason given)"
# Control characters other than tab and line feed: no memory needs them, a hostile one hides behind them.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class ReadMemory:
    """A memory file as tidy read it: what a change to it is checked against when applied."""

    file_name: str
    text: str  # its start (TIDY_READ_MAX_BYTES)
    digest: str  # sha256 of the whole file: applying checks it is still so
    size: int
    whole: bool  # False: the file is longer than TIDY_READ_MAX_BYTES (the model sees its start)


@dataclass(frozen=True)
class FileChange:
    action: Action
    file_name: str  # for "create": the name it is expected to get (chosen again when applied)
    name: str  # the memory's name after the change (for "delete": before it)
    reason: str
    new_text: str | None = None  # the whole file as it will be written; None for "delete"
    old: ReadMemory | None = None  # None for "create"


@dataclass
class Proposal:
    changes: list[FileChange] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # one line per proposed change left out, and why
    notes: list[str] = field(default_factory=list)  # what was and was not reviewed
    reviewed: int = 0  # memories the model looked at


def read_memory(store: MemoryStore, file_name: str) -> ReadMemory:
    """The file read as every memory is (see `MemoryStore.read_text`); OSError when it cannot be,
    or is too large for the trash to keep (then tidy cannot change it either)."""
    if (problem := store.root_problem()) is not None:
        raise safe_read.UnreadableFile(problem)
    found = safe_read.read_bytes(store.root / file_name, store.root, COPY_MAX_BYTES, owner_only=True)
    if found.was_cut:
        raise safe_read.UnreadableFile(f"{visible_path(file_name)} is too large to tidy")
    start = found.data[:TIDY_READ_MAX_BYTES].decode("utf-8", errors="replace").removeprefix("\ufeff")
    return ReadMemory(file_name, start, digest_of(found.data), found.size, found.size <= TIDY_READ_MAX_BYTES)


def checked_memory_text(content: object) -> tuple[str, dict[str, str]] | str:
    """The file text a memory proposal becomes (canonical frontmatter, then the body) and its
    fields, or why it is not a memory tidy may write (one line)."""
    if not isinstance(content, str) or not content.strip():
        return "no memory text was given"
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:
        return "the text is not valid Unicode"
    if size > TIDY_MEMORY_MAX_BYTES:
        return f"the text is {size:,} bytes, over the {TIDY_MEMORY_MAX_BYTES:,}-byte limit for a memory"
    if _CONTROL.search(content):
        return "the text holds control characters"
    parsed = frontmatter.parse(content)
    fields = {key: parsed.fields.get(key, "") for key in ("name", "description", "type")}
    header = frontmatter.format(fields, "")
    if problem := memory_problem(parsed, header_bytes=len(header.encode("utf-8"))):
        return problem
    text = header + parsed.body
    if secret := find_secret(text):
        return f"it holds what looks like a secret ({secret}); memories never do"
    return text, fields


def file_name_problem(file_name: object) -> str | None:
    """Why `file_name` cannot name a memory tidy may change or delete, or None."""
    if not isinstance(file_name, str) or not file_name:
        return "no file was named"
    shown = visible_path(file_name)
    if file_name == INDEX_FILE:
        return f"{shown} is generated from the memories, never changed itself"
    if "/" in file_name or "\\" in file_name or "\0" in file_name or not is_memory_file_name(file_name):
        return f"{shown} is not the file name of a memory in the memory folder"
    return None


def clean_reason(reason: object) -> str:
    if not isinstance(reason, str) or not reason.strip():
        return NO_REASON
    return clean_inline(reason, REASON_MAX_CHARS) or NO_REASON


def name_conflicts(changes: Sequence[FileChange], memories: Iterable[MemoryFile]) -> dict[int, str]:
    """Changes (by index) that would give a memory a name another one keeps. A name is held, in
    this order, by a memory the changes leave in place, by a memory a change leaves its name to
    (a change to "gamma" that keeps it called gamma beats a new memory named gamma, wherever
    each comes in the list), then by the first change to claim it. Names compare by `name_key`."""
    usable = {memory.file_name: memory for memory in memories if memory.problem is None}
    touched = {change.file_name for change in changes if change.action != "create"}
    kept: dict[str, str] = {}  # name key -> file name, of memories the changes leave alone
    for memory in usable.values():
        if memory.file_name not in touched:
            kept.setdefault(name_key(memory.name), memory.file_name)

    def keeps_its_name(change: FileChange) -> bool:
        memory = usable.get(change.file_name)
        return (
            change.action == "change"
            and memory is not None
            and name_key(memory.name) == name_key(change.name)
        )

    order = sorted(range(len(changes)), key=lambda index: not keeps_its_name(changes[index]))
    claimed: dict[str, str] = {}
    conflicts: dict[int, str] = {}
    for index in order:
        change = changes[index]
        if change.action == "delete":
            continue
        key = name_key(change.name)
        holder = kept.get(key) or claimed.get(key)
        if holder is not None:
            conflicts[index] = f"a memory named {change.name!r} exists ({visible_path(holder)})"
        else:
            claimed[key] = change.file_name
    return dict(sorted(conflicts.items()))


def new_file_name(fields: dict[str, str], taken: set[str]) -> str:
    """Where a created memory goes: `{type}_{slug}.md` not in `taken` (casefolded), which it joins."""
    chosen = memory_file_name(fields["type"], fields["name"], taken)
    taken.add(chosen.casefold())
    return chosen


class ProposalBuilder:
    """Collects the checked changes; every change left out is a line in `proposal.dropped`."""

    def __init__(self, memories: Sequence[MemoryFile], folder_names: Sequence[str]) -> None:
        self.memories = list(memories)
        self.by_file = {m.file_name: m for m in memories}
        self.taken = {name.casefold() for name in folder_names}
        self.proposal = Proposal()
        self.touched: set[str] = set()

    def drop(self, line: str) -> None:
        log.info("tidy: left out: %s", line)
        self.proposal.dropped.append(line)

    def take(self, raw: RawChange, read: dict[str, ReadMemory], where: str) -> int:
        """Add the change if it passes the checks; 1 when it was a new memory, else 0."""
        if raw.action not in ACTIONS:
            self.drop(f"{where}: unknown action {visible_path(str(raw.action)[:40])}")
            return 0
        reason = clean_reason(raw.reason)
        if raw.action == "create":
            checked = checked_memory_text(raw.content)
            if isinstance(checked, str):
                self.drop(f"{where}: a new memory: {checked}")
                return 0
            text, fields = checked
            self.proposal.changes.append(
                FileChange("create", new_file_name(fields, self.taken), fields["name"], reason, text)
            )
            return 1
        file_name = raw.file
        if problem := file_name_problem(file_name):
            self.drop(f"{where}: {problem}")
            return 0
        assert file_name is not None
        shown = visible_path(file_name)
        if file_name not in read:
            self.drop(f"{where}: {shown} was not among the memories read for this batch")
        elif file_name in self.touched:
            self.drop(f"{where}: a second change to {shown} (only the first is kept)")
        elif raw.action == "delete":
            self._add(
                FileChange("delete", file_name, self.by_file[file_name].name, reason, None, read[file_name])
            )
        elif not read[file_name].whole:
            self.drop(f"{where}: {shown} is longer than tidy reads; edit it by hand (/memory edit)")
        elif isinstance(checked := checked_memory_text(raw.content), str):
            self.drop(f"{where}: {shown}: {checked}")
        elif checked[0] == read[file_name].text:
            self.drop(f"{where}: {shown}: the proposed text is the same as the file's")
        else:
            self._add(
                FileChange("change", file_name, checked[1]["name"], reason, checked[0], read[file_name])
            )
        return 0

    def _add(self, change: FileChange) -> None:
        self.touched.add(change.file_name)
        self.proposal.changes.append(change)

    def finish(self) -> Proposal:
        proposal = self.proposal
        conflicts = name_conflicts(proposal.changes, self.memories)
        for index, reason in conflicts.items():
            self.drop(f"{visible_path(proposal.changes[index].file_name)}: {reason}")
        proposal.changes = [c for i, c in enumerate(proposal.changes) if i not in conflicts]
        return proposal
