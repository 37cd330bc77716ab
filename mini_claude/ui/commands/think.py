"""`/think [on|off|N]`: whether the model is asked to think before it answers, from the next
message on (one thinking setting per turn, as the API asks), for the rest of the session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_claude.core.untrusted import visible_text
from mini_claude.llm.thinking import DEFAULT_BUDGET, budget_problem, room_note
from mini_claude.ui.commands.registry import CommandContext, command

if TYPE_CHECKING:
    from mini_claude.app.session import Session

USAGE = "/think switches thinking on or off; /think on, /think off, or /think N (a budget of N tokens)"


def think(session: Session, argument: str) -> str:
    """Switch (no argument), set (on, off, a budget) and say the state, in one or two lines."""
    agent, word = session.agent, argument.strip().lower().replace(",", "").replace("_", "")
    wanted = agent.thinking or session.settings.thinking_budget or DEFAULT_BUDGET  # when it goes on
    if not word:
        budget = None if agent.thinking is not None else wanted
    elif word in ("on", "off"):
        budget = wanted if word == "on" else None
    elif not word.isdigit():
        return f"{USAGE}: not {visible_text(argument)!r}."
    elif (problem := budget_problem(int(word))) is not None:
        return f"{problem[0].upper()}{problem[1:]}."
    else:
        budget = int(word)
    agent.thinking = budget
    if budget is None:
        return "Thinking off: the model is not asked to think (one that thinks by default still may)."
    line = f"Thinking on: the model thinks first, up to {budget:,} tokens, from your next message."
    note = room_note(budget, agent.max_tokens)
    return line if note is None else f"{line}\n{note}"


@command("think", "Ask the model to think before it answers, or not", usage="[on|off|N]")
def _think(ctx: CommandContext, argument: str) -> None:
    ctx.say(think(ctx.session, argument))
