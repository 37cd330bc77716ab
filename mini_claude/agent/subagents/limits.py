"""What a sub-agent may not do that its session may: write memories, and fire the hooks of the
conversation's own turns (its tool calls' hooks run as the main agent's do)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mini_claude.core.errors import ToolError
from mini_claude.core.hook_points import HookVerdict, TurnHooks
from mini_claude.tools.base import MemoryWriter, ToolResult


class ReadOnlyMemories:
    """The memory writer of a sub-agent: a write into a memory folder is refused, with a line
    saying why (without it, the file tools would take it for an ordinary write)."""

    def __init__(self, writer: MemoryWriter | None, refusal: str) -> None:
        self.writer, self.refusal = writer, refusal

    def owns(self, path: Path) -> bool:
        return self.writer is not None and self.writer.owns(path)

    def save(self, path: Path, content: str, *, edit: bool) -> ToolResult:
        raise ToolError(self.refusal)

    def refresh(self) -> None:
        if self.writer is not None:
            self.writer.refresh()


class SubagentHooks(TurnHooks):
    """The session's hooks, for a sub-agent: before and after each tool call as for the main
    agent's; a task is no prompt the user submitted, and its end is not the turn's (whose
    approvals hold until the main agent's turn ends): those points pass."""

    def __init__(self, hooks: TurnHooks) -> None:
        self.hooks = hooks

    def before_tool(self, call_id: str, name: str, tool_input: dict[str, Any]) -> HookVerdict:
        return self.hooks.before_tool(call_id, name, tool_input)

    def after_tool(
        self, call_id: str, name: str, tool_input: dict[str, Any], response: dict[str, Any] | None
    ) -> HookVerdict:
        return self.hooks.after_tool(call_id, name, tool_input, response)

    def runs_for(self, tool: str) -> bool:
        return self.hooks.runs_for(tool)

    def before_compaction(self, trigger: str, focus: str | None) -> None:
        self.hooks.before_compaction(trigger, focus)
