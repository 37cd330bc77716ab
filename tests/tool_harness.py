"""Driving the real tools directly: the registry, a scripted user at the permission prompt, and a
recording stand-in for the memory seam (the real memory store has tests of its own)."""

from __future__ import annotations

from pathlib import Path

from mini_claude.permissions import PermissionRequest
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.registry import default_registry

REGISTRY = default_registry()


def run_tool(ctx: ToolContext, name: str, **tool_input: object) -> ToolResult:
    return REGISTRY.run(name, tool_input, ctx)


class ScriptedUser:
    """Stands in for the UI's permission prompt: answers from a script, records every request."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.requests: list[PermissionRequest] = []

    def __call__(self, request: PermissionRequest) -> str:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else "n"


class RecordingMemoryWriter:
    """A `MemoryWriter` as the file tools see it: records saves and refreshes under `root`."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root
        self.saved: list[tuple[Path, str, bool]] = []
        self.refreshes = 0

    def owns(self, path: Path) -> bool:
        return self.root is not None and path.is_relative_to(self.root)

    def save(self, path: Path, content: str, *, edit: bool) -> ToolResult:
        self.saved.append((path, content, edit))
        return ToolResult(f"saved memory {path.name}", "memory saved")

    def refresh(self) -> None:
        self.refreshes += 1
