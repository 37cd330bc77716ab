"""The memory writer: the model's writes into the memory directory, validated, secret-free,
canonically named and indexed before they reach the disk."""

from __future__ import annotations

import os
from pathlib import Path

from mini_claude import prompts
from mini_claude.errors import MemoryStoreError, ToolError
from mini_claude.memory import frontmatter
from mini_claude.memory.naming import INDEX_FILE, MEMORY_SUFFIX
from mini_claude.memory.secrets import find_secret
from mini_claude.memory.store import MemoryStore
from mini_claude.memory.validation import memory_problem
from mini_claude.tools.base import ToolResult


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
        parsed = frontmatter.parse(content)
        if problem := memory_problem(parsed):
            raise ToolError(prompts.notice("memory_invalid", problem=problem))
        if secret := find_secret(content):
            raise ToolError(prompts.notice("memory_secret", kind=secret))
        name, memory_type = parsed.fields["name"], parsed.fields["type"]
        try:
            saved = self.store.save(
                name=name,
                description=parsed.fields["description"],
                memory_type=memory_type,
                body=parsed.body,
                target=target if edit else None,
            )
        except MemoryStoreError as error:
            raise ToolError(prompts.notice("memory_not_saved", reason=error)) from error
        outcome = "memory_saved_new" if saved.created else "memory_updated"
        message = prompts.notice(outcome, name=repr(name), type=memory_type, file=saved.path.name)
        if saved.path != target and not edit:
            message += " " + prompts.notice("memory_renamed", file=saved.path.name)
        verb = "saved new" if saved.created else "updated"
        return ToolResult(message, f"{verb} memory {saved.path.name}")

    def _check_target(self, target: Path) -> None:
        root = Path(os.path.realpath(self.store.root))
        if target.parent != root:
            raise ToolError(prompts.notice("memory_bad_location", memory_dir=str(root)))
        if target.name == INDEX_FILE:
            raise ToolError(prompts.notice("memory_index_generated"))
        if not target.name.endswith(MEMORY_SUFFIX) or target.name.startswith("."):
            raise ToolError(prompts.notice("memory_bad_location", memory_dir=str(root)))
