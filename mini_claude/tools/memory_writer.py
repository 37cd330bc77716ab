"""The memory writer: the model's writes into the memory directory, validated, secret-free,
canonically named and indexed before they reach the disk."""

from __future__ import annotations

import os
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.errors import MemoryStoreError, ToolError
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import INDEX_FILE, MEMORY_SUFFIX
from mini_claude.memory.store.validation import memory_problem
from mini_claude.safety.secrets.check import find_secret
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
        return self._store(content, target=target if edit else None, asked=target)

    def save_new(self, content: str) -> ToolResult:
        """A memory from outside the file tools (a `#` note at the prompt), held to the same rules:
        valid frontmatter, no secret, a file name from its type and name, the index rebuilt."""
        return self._store(content, target=None, asked=None)

    def _store(self, content: str, *, target: Path | None, asked: Path | None) -> ToolResult:
        """Save `content` at `target` (an edit) or under its canonical name; `asked` is the path
        the writer named, reported when the memory went elsewhere."""
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
                target=target,
            )
        except MemoryStoreError as error:
            raise ToolError(prompts.notice("memory_not_saved", reason=error)) from error
        outcome = "memory_saved_new" if saved.created else "memory_updated"
        message = prompts.notice(outcome, name=repr(name), type=memory_type, file=saved.path.name)
        verb = "saved new" if saved.created else "updated"
        summary = f"{verb} memory {saved.path.name}"
        if asked is not None and saved.path != asked:
            message += " " + prompts.notice("memory_renamed", file=saved.path.name)
            # The tool line names the file the model asked for: say plainly where it went instead.
            summary = f"{verb} memory, saved as {saved.path.name} (not {asked.name})"
        return ToolResult(message, summary)

    def _check_target(self, target: Path) -> None:
        root = Path(os.path.realpath(self.store.root))
        if target.parent != root:
            raise ToolError(prompts.notice("memory_bad_location", memory_dir=str(root)))
        if target.name == INDEX_FILE:
            raise ToolError(prompts.notice("memory_index_generated"))
        if not target.name.endswith(MEMORY_SUFFIX) or target.name.startswith("."):
            raise ToolError(prompts.notice("memory_bad_location", memory_dir=str(root)))
