"""The memory writer: the model's writes into the memory directory (and `#` notes), secret-free,
then saved by the store, which holds them to the rules of a valid memory and names and indexes them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.errors import InvalidMemory, MemoryStoreError, ToolError
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import INDEX_FILE, MEMORY_SUFFIX
from mini_claude.memory.store.validation import memory_problem
from mini_claude.safety.secrets.check import find_secret
from mini_claude.tools.base import ToolResult


@dataclass(frozen=True)
class WrittenMemory:
    path: Path  # where it went: its canonical name, or the file edited
    created: bool
    name: str
    type: str

    def tool_result(self, asked: Path) -> ToolResult:
        """What the model and the user read of it; `asked` is the path the model named."""
        outcome = "memory_saved_new" if self.created else "memory_updated"
        message = prompts.notice(outcome, name=repr(self.name), type=self.type, file=self.path.name)
        verb = "saved new" if self.created else "updated"
        if self.path == asked:
            return ToolResult(message, f"{verb} memory {self.path.name}")
        # The tool line names the file the model asked for: say plainly where it went instead.
        message += " " + prompts.notice("memory_renamed", file=self.path.name)
        return ToolResult(message, f"{verb} memory, saved as {self.path.name} (not {asked.name})")


class MemoryStoreWriter:
    """The `MemoryWriter` the file tools hand paths inside the memory directory to."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def owns(self, path: Path) -> bool:
        return self.store.owns(path)

    def refresh(self) -> None:
        self.store.refresh()

    def save(self, path: Path, content: str, *, edit: bool) -> ToolResult:
        target = Path(os.path.realpath(path))
        self._check_target(target)
        return self.write(content, target if edit else None).tool_result(asked=target)

    def write(self, content: str, target: Path | None = None) -> WrittenMemory:
        """Save a whole memory file's `content` at `target` (an edit), else under its canonical name
        (a `#` note comes this way too). ToolError, for the model, says why it was refused."""
        parsed = frontmatter.parse(content)
        if not parsed.has_block:  # nothing to hand the store: say what is wrong with the block
            raise ToolError(prompts.notice("memory_invalid", problem=memory_problem(parsed)))
        if secret := find_secret(content):
            raise ToolError(prompts.notice("memory_secret", kind=secret))
        name, memory_type = parsed.fields.get("name", ""), parsed.fields.get("type", "")
        try:
            saved = self.store.save(
                name=name,
                description=parsed.fields.get("description", ""),
                memory_type=memory_type,
                body=parsed.body,
                target=target,
            )
        except InvalidMemory as error:  # the store's rules are the one check
            raise ToolError(prompts.notice("memory_invalid", problem=error)) from error
        except MemoryStoreError as error:
            raise ToolError(prompts.notice("memory_not_saved", reason=error)) from error
        return WrittenMemory(saved.path, saved.created, name, memory_type)

    def _check_target(self, target: Path) -> None:
        root = Path(os.path.realpath(self.store.root))
        if target.parent != root:
            raise ToolError(prompts.notice("memory_bad_location", memory_dir=str(root)))
        if target.name == INDEX_FILE:
            raise ToolError(prompts.notice("memory_index_generated"))
        if not target.name.endswith(MEMORY_SUFFIX) or target.name.startswith("."):
            raise ToolError(prompts.notice("memory_bad_location", memory_dir=str(root)))
