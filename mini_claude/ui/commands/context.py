"""`/compact [focus]` and `/context`: summarise the conversation now, or see how full
the context window is, part by part."""

from __future__ import annotations

from mini_claude.agent.compaction import CANCELLED
from mini_claude.agent.context_report import context_breakdown
from mini_claude.core.untrusted import visible_lines
from mini_claude.ui.commands.registry import CommandContext, command
from mini_claude.ui.render.context_view import breakdown_lines


@command("compact", "Summarise the conversation to free context space", usage="[focus]")
def _compact(ctx: CommandContext, argument: str) -> None:
    try:
        compacted = ctx.session.agent.compact(argument or None)
    except KeyboardInterrupt:  # landed outside the summary call, which handles its own
        ctx.renderer.interrupt()
        ctx.say(CANCELLED, "yellow")
        return
    if compacted is None:
        return  # a notice said why
    summary = "\n\n".join(block.get("text", "") for block in compacted.summary)
    ctx.say("Summary:", "bold")
    ctx.say(visible_lines(summary.strip()), "dim")


@command("context", "Show how full the context window is, part by part")
def _context(ctx: CommandContext, argument: str) -> None:
    if argument:
        ctx.say("/context takes no argument: type /context alone.")
        return
    agent = ctx.session.agent
    report = context_breakdown(agent.context.view, agent.request_parts())
    ctx.say("\n".join(breakdown_lines(report)))
