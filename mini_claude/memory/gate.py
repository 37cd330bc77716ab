"""Model writes into the memory directory: validated, secret-free, canonically named, indexed."""

from __future__ import annotations

import os
from pathlib import Path

from mini_claude import prompts
from mini_claude.errors import ToolError
from mini_claude.memory import frontmatter
from mini_claude.memory.naming import INDEX_FILE, MEMORY_SUFFIX, MEMORY_TYPES
from mini_claude.memory.secrets import find_secret
from mini_claude.memory.store import MemoryStore, MemoryStoreError
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
        fields = {key: parsed.fields.get(key, "").strip() for key in ("name", "description", "type")}
        problem = _content_problem(parsed, fields)
        if problem:
            raise ToolError(prompts.notice("memory_invalid", problem=problem))
        secret = find_secret(content)
        if secret:
            raise ToolError(prompts.notice("memory_secret", kind=secret))
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


def _content_problem(parsed: frontmatter.Frontmatter, fields: dict[str, str]) -> str | None:
    if not parsed.has_block:
        return "it does not start with a frontmatter block (--- … ---)"
    missing = [key for key, value in fields.items() if not value]
    if missing:
        return "the frontmatter lacks " + ", ".join(missing)
    if fields["type"] not in MEMORY_TYPES:
        return f"type {fields['type']!r} is not one of {', '.join(MEMORY_TYPES)}"
    return None
