"""The session's sub-agents: the agent types found at start (built in, and from the agent files),
and the `agent` tool that runs them, built from the session's parts."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from mini_claude.agent.spend_cap import SpendCap
from mini_claude.agent.subagents import tool as agent_tool
from mini_claude.agent.subagents.spawn import AGENT_TOOL, SessionParts
from mini_claude.core.config import Settings, memory_project_root
from mini_claude.core.events import EventSink
from mini_claude.core.hook_points import TurnHooks
from mini_claude.extensions.agents.definitions import AgentType, BrokenAgent, find_types
from mini_claude.llm.client import ModelClient
from mini_claude.memory.scopes import MemoryScopes
from mini_claude.memory.section import memory_index
from mini_claude.sessions.recorder import TranscriptRecorder
from mini_claude.sessions.transcript.records import SUBAGENTS_FOLDER
from mini_claude.sessions.transcript.writer import TranscriptWriter
from mini_claude.tools.base import ToolContext
from mini_claude.tools.registry import ToolRegistry


def agent_types(settings: Settings) -> tuple[list[AgentType], list[BrokenAgent]]:
    root = memory_project_root(Path(os.path.realpath(settings.project_dir)))
    return find_types(root, Path.home())


def add_agent_tool(
    tools: ToolRegistry, settings: Settings, *, llm: ModelClient, tool_context: ToolContext, hooks: TurnHooks,
    sink: EventSink, memories: MemoryScopes, transcript: TranscriptRecorder, warn: Callable[[str], None],
    spend_cap: SpendCap, model: Callable[[], str],
) -> None:  # fmt: skip
    """The `agent` tool, with the types found now (the tool's description lists them: it stays
    the same for the session, so the prompt cache holds). `model()`: the main agent's now."""
    types, _ = agent_types(settings)
    project = memory_project_root(Path(os.path.realpath(settings.project_dir)))

    def new_transcript(model: str) -> TranscriptRecorder:
        folder = Path(settings.sessions_dir) / SUBAGENTS_FOLDER
        return TranscriptRecorder(
            TranscriptWriter(folder, cwd=settings.project_dir, project=project, model=model, warn=warn)
        )

    def parts() -> SessionParts:
        return SessionParts(
            llm=llm, tools=tools, tool_context=tool_context, hooks=hooks, sink=sink,
            model=model(), side_model=settings.side_model, max_tokens=settings.max_tokens,
            max_turns=settings.max_turns, context_window=settings.context_window,
            max_tool_calls=settings.max_tool_calls, spend_cap=spend_cap,
            memory_index=(lambda: memory_index(memories)) if settings.memory_enabled else (lambda: ""),
            new_transcript=new_transcript,
            link=lambda session_id, name, call_id: transcript.writer.add_subagent(session_id, name, call_id),
        )  # fmt: skip

    handler = agent_tool.agent_tool(parts, types)
    tools.add(agent_tool.definition(types), handler, offered=lambda: True, concurrent=True)
    assert AGENT_TOOL in tools.names
