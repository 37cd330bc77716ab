"""Model writes into the memory directory: validated, secret-free, canonically named, indexed."""

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


class MemoryWrites:
    """The `MemoryGate` the file tools use for paths inside the memory directory."""

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
        fields = parsed.fields
        try:
            saved = self.store.save(
                name=fields["name"],
                description=fields["description"],
                memory_type=fields["type"],
                body=parsed.body,
                target=target if edit else None,
            )
        except MemoryStoreError as error:
            raise ToolError(f"Memory not saved: {error}") from error
        verb = "Saved new" if saved.created else "Updated"
        message = (
            f"{verb} memory {fields['name']!r} ({fields['type']}) in {saved.path.name}; MEMORY.md updated."
        )
        if saved.path != target and not edit:
            message += f" (Memory files are named by type and name, so it went to {saved.path.name}.)"
        return ToolResult(message, f"{verb.lower()} memory {saved.path.name}")

    def _check_target(self, target: Path) -> None:
        root = Path(os.path.realpath(self.store.root))
        if target.parent != root:
            raise ToolError(prompts.notice("memory_bad_location", memory_dir=str(root)))
        if target.name == INDEX_FILE:
            raise ToolError(prompts.notice("memory_index_generated"))
        if not target.name.endswith(MEMORY_SUFFIX) or target.name.startswith("."):
            raise ToolError(prompts.notice("memory_bad_location", memory_dir=str(root)))
