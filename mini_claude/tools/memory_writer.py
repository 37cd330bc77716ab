"""The memory writer: the model's writes into the memory folders (and `#` notes), secret-free,
stamped with who wrote them, then saved by the store, which holds them to the rules of a valid
memory (the one check) and names and indexes them.

A model write asks first (through the permission callback, with the change shown) when it would
change a memory a person wrote or edited by hand (in every permission mode but bypass), when it
goes to the team's folder in the repository (always), and before every save under
MINI_CLAUDE_MEMORY=ask; print mode, which cannot ask, refuses with a line the model reads.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.env_values import MemoryMode
from mini_claude.core.errors import InvalidMemory, MemoryStoreError, ToolError
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.listing import one_line
from mini_claude.memory.provenance import Provenance, stamped, without_provenance, written_by_hand
from mini_claude.memory.scopes import SCOPE_WORDS, MemoryScopes
from mini_claude.memory.store.memory_store import NO_FILE, MemoryStore
from mini_claude.memory.store.naming import INDEX_FILE, MEMORY_SUFFIX
from mini_claude.memory.store.reverting import digest_of
from mini_claude.memory.store.validation import check_memory, memory_problem
from mini_claude.safety import change_preview
from mini_claude.safety.permissions import Permissions
from mini_claude.safety.secrets.check import find_secret
from mini_claude.tools.base import ToolResult

BY_USER = Provenance("user")  # a `#` note: the user's own words
SHOWN_DIFF_LINES = 12  # of a change, under the tool line; `/memory show` has the rest
DESCRIPTION_SHOWN_CHARS = 100
_REASONS = {
    "hand": "a memory someone wrote or edited by hand",
    "team": "a team memory: committed to the repository, read by everyone working on it",
    "ask": "MINI_CLAUDE_MEMORY=ask: every save asks",
}


@dataclass(frozen=True)
class WrittenMemory:
    path: Path  # where it went: its canonical name, or the file edited
    created: bool
    name: str
    type: str
    detail: tuple[str, ...] = ()  # what the user sees under the tool line

    def tool_result(self, asked: Path) -> ToolResult:
        """What the model and the user read of it; `asked` is the path the model named."""
        outcome = "memory_saved_new" if self.created else "memory_updated"
        message = prompts.notice(outcome, name=repr(self.name), type=self.type, file=self.path.name)
        verb = "saved new" if self.created else "updated"
        if self.path == asked:
            return ToolResult(message, f"{verb} memory {self.path.name}", detail=self.detail)
        # The tool line names the file the model asked for: say plainly where it went instead.
        message += " " + prompts.notice("memory_renamed", file=self.path.name)
        summary = f"{verb} memory, saved as {self.path.name} (not {asked.name})"
        return ToolResult(message, summary, detail=self.detail)


class MemoryStoreWriter:
    """The `MemoryWriter` the file tools hand paths inside a memory folder to."""

    def __init__(
        self,
        memories: MemoryScopes | MemoryStore,
        permissions: Permissions | None = None,
        *,
        mode: MemoryMode = "on",
        session_id: Callable[[], str] = lambda: "",
        files_read: Sequence[str] = (),
    ) -> None:
        self.memories = MemoryScopes.of(memories)
        self.store = self.memories.project
        self.permissions = permissions
        self.mode = mode
        self.session_id = session_id
        self.files_read = files_read  # the turn's reads (display paths), kept up to date by the session

    def owns(self, path: Path) -> bool:
        return self.memories.owner(path) is not None

    def refresh(self) -> None:
        for store in self.memories.stores():
            store.refresh()

    def save(self, path: Path, content: str, *, edit: bool) -> ToolResult:
        target = Path(os.path.realpath(path))
        store = self._check_target(target)
        if self.mode == "off":
            raise ToolError(prompts.notice("memory_off"))
        by = Provenance("model", self.session_id(), tuple(dict.fromkeys(self.files_read)))
        tool = "edit_file" if edit else "write_file"
        return self.write(content, target if edit else None, store=store, by=by, tool=tool).tool_result(
            target
        )

    def write(
        self,
        content: str,
        target: Path | None = None,
        *,
        store: MemoryStore | None = None,
        by: Provenance = BY_USER,
        tool: str = "write_file",
    ) -> WrittenMemory:
        """Save a whole memory file's `content` in `store` (the project's by default): at `target`
        (an edit), else under its canonical name (a `#` note comes this way too). ToolError, for
        the model, says why it was refused; PermissionDenied when the user said no."""
        store = store or self.store
        parsed = frontmatter.parse(content)
        if not parsed.has_block:  # nothing to hand the store: say what is wrong with the block
            raise ToolError(prompts.notice("memory_invalid", problem=memory_problem(parsed)))
        if secret := find_secret(content):
            raise ToolError(prompts.notice("memory_secret", kind=secret))
        name, memory_type, description = (
            parsed.fields.get("name", ""),
            parsed.fields.get("type", ""),
            parsed.fields.get("description", ""),
        )
        now = time.time()
        try:
            fields = check_memory(name, description, memory_type, parsed.body, parsed.fields)
            path, current = store.target_for(name, memory_type, target)
            before = current.decode("utf-8", "surrogateescape") if current is not None else None
            previous = frontmatter.parse(before).fields if before is not None else None
            after = stamped(fields, parsed.body, by, previous, now)
            if by.source == "model":
                self._confirm(tool, store, path, before, after)
            saved = store.save(
                name=name, description=description, memory_type=memory_type, body=parsed.body,
                target=path, extra=parsed.fields, by=by, now=now,
                expect=digest_of(current) if current is not None else NO_FILE,
            )  # fmt: skip
        except InvalidMemory as error:  # the store's rules are the one check
            raise ToolError(prompts.notice("memory_invalid", problem=error)) from error
        except MemoryStoreError as error:
            raise ToolError(prompts.notice("memory_not_saved", reason=error)) from error
        shown = _shown(name, memory_type, store.scope, description, by, before, after)
        return WrittenMemory(saved.path, saved.created, name, memory_type, shown)

    def _confirm(self, tool: str, store: MemoryStore, path: Path, before: str | None, after: str) -> None:
        """Ask first when the write needs a yes (see the module); PermissionDenied when not given."""
        if store.scope == "team":
            why = "team"
        elif before is not None and written_by_hand(frontmatter.parse(before)):
            why = "hand"
        elif self.mode == "ask":
            why = "ask"
        else:
            return
        if self.permissions is None:
            raise ToolError(prompts.notice("memory_unconfirmed", file=path.name, reason=_REASONS[why]))

        def preview() -> change_preview.ChangePreview:
            if before is None:
                return change_preview.new_file_preview(without_provenance(after))
            return change_preview.replace_preview(without_provenance(before), without_provenance(after))

        refusal = prompts.notice("memory_unconfirmed", file=path.name, reason=_REASONS[why])
        self.permissions.confirm_write(
            tool, path, _REASONS[why], preview, every_mode=why != "hand", refusal=refusal
        )

    def _check_target(self, target: Path) -> MemoryStore:
        store = self.memories.owner(target)
        root = Path(os.path.realpath(store.root if store is not None else self.store.root))
        if store is None or target.parent != root:
            raise ToolError(prompts.notice("memory_bad_location", memory_dir=str(root)))
        if target.name == INDEX_FILE:
            raise ToolError(prompts.notice("memory_index_generated"))
        if not target.name.endswith(MEMORY_SUFFIX) or target.name.startswith("."):
            raise ToolError(prompts.notice("memory_bad_location", memory_dir=str(root)))
        if store.root_problem() is not None:
            raise ToolError(prompts.notice("memory_not_saved", reason=store.root_problem()))
        return store


def _shown(
    name: str, memory_type: str, scope: str, description: str, by: Provenance, before: str | None, after: str
) -> tuple[str, ...]:
    """Under the tool line: the memory's name, type, scope and description; the files read in the
    turn it was saved in; the change, for an update (its first SHOWN_DIFF_LINES lines)."""
    about = one_line(description, DESCRIPTION_SHOWN_CHARS)
    lines = [f"{one_line(name, 80)!r} ({memory_type}, {SCOPE_WORDS[scope]}) — {about}"]
    if by.from_files:
        lines.append("from a turn that read: " + ", ".join(by.from_files))
    if before is not None:
        diff = change_preview.edit_preview(without_provenance(before), without_provenance(after))
        changed = [line for line in (*diff.lines, *diff.more) if line.kind in ("added", "removed")]
        lines += [("+ " if line.kind == "added" else "- ") + line.text for line in changed[:SHOWN_DIFF_LINES]]
        if len(changed) > SHOWN_DIFF_LINES:
            more = len(changed) - SHOWN_DIFF_LINES
            lines.append(f"… {more} more changed lines (/memory show {one_line(name, 80)})")
    return tuple(lines)
