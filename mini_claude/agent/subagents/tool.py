"""The `agent` tool (Claude Code's `Task`, or `Agent`): its definition, listing the agent types
there are, and its handler, which runs the sub-agent asked for."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from mini_claude.agent.side_by_side import MAX_SIDE_BY_SIDE
from mini_claude.agent.subagents.spawn import SessionParts, agent_notice, run_subagent
from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.extensions.agents.definitions import BUILT_IN_ALIASES, GENERAL, AgentType
from mini_claude.tools.base import RUNNING_CALL_ID, ToolContext, ToolResult

DESCRIPTION_CHARS = 80  # of a task's description, on the screen


def definition(types: Sequence[AgentType]) -> dict[str, Any]:
    tool = copy.deepcopy(prompts.load_toml("agents.toml")["tool"])
    listed = "\n".join(f"- {kind.name}: {kind.description}" for kind in types)
    tool["description"] = prompts.fill(
        tool["description"].strip(), types=listed, max_at_once=MAX_SIDE_BY_SIDE
    )
    return dict(tool)


def agent_tool(parts: Callable[[], SessionParts], types: Sequence[AgentType]) -> Callable[..., ToolResult]:
    """The handler; `parts()` gives what a sub-agent is built from (at the call: the session's now)."""
    by_name = {kind.name: kind for kind in types}

    def run(ctx: ToolContext, description: str, prompt: str, subagent_type: str = GENERAL) -> ToolResult:
        name = BUILT_IN_ALIASES.get(subagent_type.strip(), subagent_type.strip()) or GENERAL
        kind = by_name.get(name)
        if kind is None:
            raise ToolError(agent_notice("unknown_type", name=repr(name), types=", ".join(by_name)))
        if not prompt.strip():
            raise ToolError("The prompt is empty: give the sub-agent its task, with what it needs to know.")
        task = " ".join(description.split())[:DESCRIPTION_CHARS] or kind.name
        return run_subagent(parts(), kind, task, prompt, RUNNING_CALL_ID.get())

    return run
