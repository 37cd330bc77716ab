"""Running one sub-agent: another `Agent` built from the session's parts (the same model client,
permissions and hooks; a subset of the tools; its own conversation, system prompt and transcript),
given one task, whose final text becomes the `agent` call's result.
"""

from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from mini_claude.agent.loop import Agent
from mini_claude.agent.side_by_side import show_on_talking_thread, working_for
from mini_claude.agent.spend_cap import SpendCap
from mini_claude.agent.subagents.limits import ReadOnlyMemories, SubagentHooks
from mini_claude.agent.subagents.progress import Progress
from mini_claude.core import prompts
from mini_claude.core.events import EventSink
from mini_claude.core.hook_points import TurnHooks
from mini_claude.core.untrusted import attribute, wrap
from mini_claude.extensions.agents.definitions import EXPLORE, GENERAL, AgentType
from mini_claude.extensions.skills.reading import NotReadable
from mini_claude.llm.client import ModelClient
from mini_claude.sessions.recorder import TranscriptRecorder
from mini_claude.tools.base import ToolContext, ToolResult, count_noun
from mini_claude.tools.registry import ToolRegistry

AGENT_TOOL = "agent"
# Tools no sub-agent has: it cannot start sub-agents; a plan and a skill's approvals are the main
# conversation's.
NEVER_FOR_SUBAGENTS = frozenset({AGENT_TOOL, "exit_plan_mode", "skill"})
CUSTOM_PROMPT_TAG = "agent_instructions"  # a custom agent's file body, untrusted text
NewTranscript = Callable[[str], TranscriptRecorder]  # (model) → a new transcript, beside the session's
Link = Callable[[str, str, str], None]  # (its session id, agent name, call id) → a record in the session's


@dataclass
class SessionParts:
    """What every sub-agent of a session is built from."""

    llm: ModelClient
    tools: ToolRegistry  # the main agent's, the `agent` tool included (left out for sub-agents)
    tool_context: ToolContext
    hooks: TurnHooks
    sink: EventSink  # the session's (the screen, print mode)
    model: str
    side_model: str
    max_tokens: int
    max_turns: int
    context_window: int
    max_tool_calls: int
    spend_cap: SpendCap  # the session's: sub-agents' calls count toward it and are held to it
    memory_index: Callable[[], str]  # "" when memory is off
    new_transcript: NewTranscript
    link: Link


def tools_for(kind: AgentType, tools: ToolRegistry) -> ToolRegistry:
    """Explore: the read-only tools; general: all the main agent's; a custom type: those its file
    names (of the main agent's); never the agent tool."""
    if kind.name == EXPLORE and kind.scope == "built-in":
        return tools.subset(lambda name: tools.is_read_only(name) and name not in NEVER_FOR_SUBAGENTS)
    named = kind.tools
    return tools.subset(lambda name: name not in NEVER_FOR_SUBAGENTS and (named is None or name in named))


def run_subagent(parts: SessionParts, kind: AgentType, task: str, prompt: str, call_id: str) -> ToolResult:
    """Run `kind` on `prompt` to its end; its final text is the result. Esc or Ctrl+C stops it
    and is raised again, so the turn that started it stops too."""
    try:
        role = _role(kind)
    except NotReadable as why:
        text = agent_notice("unreadable", name=kind.name, source=kind.source, reason=why)
        return ToolResult(text, f"{kind.name}: its file cannot be read", is_error=True)
    model = (
        parts.side_model if kind.name == EXPLORE and kind.scope == "built-in" else (kind.model or parts.model)
    )
    transcript = parts.new_transcript(model)
    parts.link(transcript.session_id, kind.name, call_id)
    progress = Progress(
        call_id, kind.name, task, lambda event: show_on_talking_thread(lambda: parts.sink(event)), model
    )
    memories = ReadOnlyMemories(parts.tool_context.memory_writer, agent_notice("no_memory_writes"))
    context = replace(parts.tool_context, memory_writer=memories, files_read=[], present_plan=None)
    agent = Agent(
        llm=parts.llm, tools=tools_for(kind, parts.tools), tool_context=context, sink=progress,
        save=transcript,
        build_system_prompt=lambda: _system_prompt(role, parts), model=model, max_tokens=parts.max_tokens,
        max_turns=parts.max_turns, context_window=parts.context_window, hooks=SubagentHooks(parts.hooks),
        max_tool_calls=parts.max_tool_calls, spend_cap=parts.spend_cap,
    )  # fmt: skip
    try:
        with working_for(kind.name):
            ended = agent.run_turn(prompt)
    finally:
        transcript.close()
    progress.finish(ended.reason)
    if ended.reason == "interrupted":
        raise KeyboardInterrupt  # Esc stopped it: the turn that started it stops as well
    summary = f"{kind.name}: {count_noun(progress.tools_used, 'tool')}, {progress.tokens:,} tokens"
    if ended.reason == "done" and ended.final_text.strip():
        return ToolResult(ended.final_text, summary)
    reason = ended.problem or ended.reason
    if ended.reason == "refused_by_user":  # the user said no to it: the turn that started it ends too
        text = agent_notice(
            "ended", reason="the user refused a permission it asked for", text=ended.final_text
        )
        return ToolResult(
            text, f"{kind.name}: refused", is_error=True, denied=True, ends_turn="refused_by_user"
        )
    if not ended.final_text.strip():
        return ToolResult(agent_notice("no_report", reason=reason), summary, is_error=True)
    return ToolResult(agent_notice("ended", reason=reason, text=ended.final_text), summary, is_error=True)


def _role(kind: AgentType) -> str:
    if kind.scope == "built-in":
        return prompts.load(
            f"subagent_{kind.name if kind.name in (EXPLORE, GENERAL) else GENERAL}.md"
        ).strip()
    body = kind.system_prompt()  # read now: an edit since the start counts
    return wrap(CUSTOM_PROMPT_TAG, body, source=kind.source)


def _system_prompt(role: str, parts: SessionParts) -> str:
    today = dt.date.today()
    return prompts.render(
        "subagent.md",
        role=role,
        cwd=attribute(str(Path(parts.tool_context.project_dir))),
        platform=f"{platform.system()} {platform.release()}".strip(),
        date=f"{today.isoformat()} ({today.strftime('%A')})",
        memory=parts.memory_index(),
    ).strip()


def agent_notice(key: str, **values: object) -> str:
    """A notice of prompts/agents.toml, filled."""
    return prompts.fill(prompts.load_toml("agents.toml")["notices"][key].strip(), **values)
