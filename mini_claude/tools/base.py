"""What every tool shares: its result and the context it runs in (its failure is `errors.ToolError`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mini_claude.safety.permissions import Permissions


def count_noun(count: int, noun: str) -> str:
    """`1 line`, `2 lines`: for the short summaries the user sees."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@dataclass(frozen=True)
class ToolResult:
    content: str  # what the model reads
    summary: str  # one short line for the user, e.g. "120 lines" or "wrote 3 KB"
    is_error: bool = False
    denied: bool = False  # a permission was refused (the model is told not to just retry)
    detail: tuple[str, ...] = ()  # lines for the user under the tool line (output collapsed, a diff)


class MemoryWriter(Protocol):
    """The memory writer as the file tools see it: every write into the memory dir goes through it."""

    def owns(self, path: Path) -> bool:
        """True when the resolved `path` lies inside the memory directory (compared by components)."""
        ...

    def save(self, path: Path, content: str, *, edit: bool) -> ToolResult:
        """Validate and store a memory file written (edit=False) or edited (edit=True) by the model.

        Raises ToolError with a message for the model when the content is refused.
        """
        ...

    def refresh(self) -> None:
        """Re-index after something outside the file tools (a shell command) may have changed files."""
        ...


@dataclass
class ToolContext:
    project_dir: Path  # resolved working directory
    permissions: Permissions
    memory_writer: MemoryWriter | None = None
    # Told of each call that succeeded (name, input): a file used may bring instructions with it.
    tool_used: Callable[[str, dict[str, Any]], None] | None = None
    # Told before a file tool changes a file (its resolved path): a checkpoint keeps what it holds.
    before_change: Callable[[Path], None] | None = None
    # Told what a running tool prints as it prints it (set around each call by the agent).
    output: Callable[[str], None] | None = None
