"""What every tool shares: its result and the context it runs in (its failure is `errors.ToolError`)."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from mini_claude.core.events import ToolEnding
from mini_claude.safety.permissions import Permissions

if TYPE_CHECKING:
    from mini_claude.llm.client import ModelClient

# The id of the tool call this thread runs (set around each call): a sub-agent names its parent.
RUNNING_CALL_ID: ContextVar[str] = ContextVar("running_call_id", default="")


def count_noun(count: int, noun: str) -> str:
    """`1 line`, `2 lines`: for the short summaries the user sees."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@dataclass(frozen=True)
class ToolResult:
    # What the model reads: text, or content blocks (text and images) for a tool whose output
    # holds pictures (an MCP server's).
    content: str | list[dict[str, Any]]
    summary: str  # one short line for the user, e.g. "120 lines" or "wrote 3 KB"
    is_error: bool = False
    denied: bool = False  # a permission was refused (the model is told not to just retry)
    # lines for the user under the tool line (output collapsed, a diff, a memory saved: what and where)
    detail: tuple[str, ...] = ()
    ends_turn: ToolEnding | None = None  # the turn ends after this call (the user said no, …)

    @property
    def text(self) -> str:
        """The content's text (what is not text, an image, left out)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(block["text"] for block in self.content if block.get("type") == "text")


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


class ToolSource(Protocol):
    """Tools that come and go while a session runs (an MCP server's), beside the built-in ones.
    Called from any thread: what it returns is a snapshot."""

    def definitions(self) -> list[dict[str, Any]]:
        """The definitions to send with the next request (name, description, input_schema)."""
        ...

    def owns(self, name: str) -> bool:
        """Whether `name` is one of its tools now (sent or not)."""
        ...

    def run(self, name: str, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run one call; raises ToolError (or PermissionDenied) for the model to read."""
        ...

    def summarize_call(self, name: str, tool_input: dict[str, Any]) -> str:
        """The call's main argument on one line, as the user sees it."""
        ...

    def new_conversation(self) -> None:
        """A new conversation starts: what the last one loaded on demand is dropped."""
        ...


@dataclass(frozen=True)
class PlanProposal:
    plan: str
    saved: Path | None  # where the plan was saved, None when it could not be


@dataclass(frozen=True)
class PlanAnswer:
    choice: Literal["accept-edits", "ask", "keep-planning", "printed"]
    words: str = ""  # what the user wants changed (keep-planning)


PlanPresenter = Callable[[PlanProposal], PlanAnswer]


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
    # What read_file read (as shown to the user) since the last turn ended: a memory saved in the
    # turn records them as where it may have come from.
    files_read: list[str] = field(default_factory=list)
    plans_dir: Path | None = None  # where exit_plan_mode saves plans (the project's `plans/`)
    # Shows a plan and reads the user's answer (the UI's); None: no one can answer.
    present_plan: PlanPresenter | None = None
    side_model: ModelClient | None = None  # web_fetch's prompt is answered by it; None: the page itself
