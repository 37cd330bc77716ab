"""Driving the real tools directly: the registry, a scripted user at the permission prompt, the
tools as a session wires them (real permissions and memory writer), and a recording stand-in for
the memory seam (the real memory store has tests of its own)."""

from __future__ import annotations

from pathlib import Path

from mini_claude.core import config
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.safety.permissions import PermissionRequest, Permissions
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.memory_writer import MemoryStoreWriter
from mini_claude.tools.registry import default_registry

REGISTRY = default_registry()


def run_tool(ctx: ToolContext, name: str, **tool_input: object) -> ToolResult:
    return REGISTRY.run(name, tool_input, ctx)


class ScriptedUser:
    """The UI's permission prompt: answers from a script (then "n"), remembers every question."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.questions: list[PermissionRequest] = []

    def __call__(self, request: PermissionRequest) -> str:
        self.questions.append(request)
        return self.answers.pop(0) if self.answers else "n"


def make_ctx(project: Path, *answers: str, mode: str = "accept-edits") -> tuple[ToolContext, ScriptedUser]:
    """The tools' context for `project` with plain permissions (no memory folder), and its user."""
    user = ScriptedUser(*answers)
    return ToolContext(project.resolve(), Permissions(project, mode=mode, ask=user)), user


class Tools:
    """The real file, search and shell tools with real permissions and the memory writer, as a
    session wires them for this test's HOME."""

    def __init__(self, project_dir: Path, mode: str = "ask", *answers: str) -> None:
        self.store = MemoryStore(config.project_memory_dir())
        self.memory_dir = self.store.root
        self.user = ScriptedUser(*answers)
        permissions = Permissions(
            project_dir,
            mode=mode,
            ask=self.user,
            memory_dir=self.store.root,
            protected_dirs=config.protected_dirs(),
        )
        self.ctx = ToolContext(project_dir.resolve(), permissions, MemoryStoreWriter(self.store))

    def run(self, name: str, **tool_input: object) -> ToolResult:
        return REGISTRY.run(name, tool_input, self.ctx)

    def write(self, path: Path | str, content: str) -> ToolResult:
        return self.run("write_file", file_path=str(path), content=content)

    def index(self) -> str:
        return (self.memory_dir / "MEMORY.md").read_text(encoding="utf-8")

    def memory_files(self) -> list[str]:
        if not self.memory_dir.exists():
            return []
        return sorted(
            p.name for p in self.memory_dir.iterdir() if p.name != "MEMORY.md" and p.suffix == ".md"
        )


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
