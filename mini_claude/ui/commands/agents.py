"""`/agents`: the sub-agent types the `agent` tool can start (built in, and from the agent files),
where each comes from, and the agent files that cannot be used, with why."""

from __future__ import annotations

from mini_claude.app.subagent_setup import agent_types
from mini_claude.core.untrusted import visible_text
from mini_claude.ui.commands.registry import CommandContext, command

DESCRIPTION_SHOWN_CHARS = 100


@command("agents", "List the sub-agent types, where each comes from, and agent files that cannot be used")
def _agents(ctx: CommandContext, argument: str) -> None:
    types, broken = agent_types(ctx.session.settings)
    lines = [f"Agent types ({len(types)}):"]
    for kind in types:
        description = visible_text(" ".join(kind.description.split()))
        room = min(DESCRIPTION_SHOWN_CHARS, max(20, ctx.console.width - len(kind.name) - 4))  # one row
        if len(description) > room:
            description = description[: room - 1] + "…"
        tools = "read-only tools" if kind.name == "explore" and kind.scope == "built-in" else (
            ", ".join(visible_text(tool) for tool in kind.tools) if kind.tools is not None else "all tools"
        )  # fmt: skip
        model = f", model {visible_text(kind.model)}" if kind.model else ""
        lines.append(f"  {visible_text(kind.name)}  {description}")
        lines.append(f"      {visible_text(kind.source)} ({tools}{model})")
        lines += [f"      note: {visible_text(note)}" for note in kind.notes]
    if broken:
        lines.append("Not used:")
        lines += [f"  {visible_text(item.source)}: {visible_text(item.reason)}" for item in broken]
    if not any(kind.scope != "built-in" for kind in types):
        lines.append("Add one: .claude/agents/NAME.md or ~/.claude/agents/NAME.md (see docs/agents.md).")
    lines.append("Types found after the session started are offered from the next session on.")
    ctx.say("\n".join(lines))
