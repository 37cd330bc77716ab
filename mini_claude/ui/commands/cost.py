"""`/cost`: the session's tokens and, for models with a known price, what they cost; the spend cap.
`/think [on|off|N]`: whether the calls ask the model to think first, from the next message on (one
thinking setting per turn, as the API asks), for the rest of the session."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_claude.agent.spend_cap import spent, unchecked_warning
from mini_claude.core.untrusted import visible_text
from mini_claude.llm.pricing import PRICES_CHECKED, estimate_cost, format_dollars
from mini_claude.llm.thinking import DEFAULT_BUDGET, budget_problem, room_note

if TYPE_CHECKING:
    from mini_claude.app.session import Session

# The side queries, one line for each purpose (llm/client.py counts them by it), in this order.
SIDE_LABELS = {"recall": "Memory recall and # notes", "tidy": "Memory tidy"}


def cost_lines(session: Session) -> list[str]:
    """/cost: the conversation's tokens and their estimated price, then the side queries apart."""
    llm = session.llm
    usage = llm.usage_total
    tokens = (
        f"Tokens this session: input {usage.input_tokens:,}, output {usage.output_tokens:,}, "
        f"cache read {usage.cache_read_tokens:,}, cache write {usage.cache_write_tokens:,}"
    )
    priced = [(model, estimate_cost(model, used)) for model, used in llm.usage_by_model.items()]
    known = [dollars for _, dollars in priced if dollars is not None]
    unknown = [model for model, dollars in priced if dollars is None]
    lines = [tokens + (f" · ≈ {format_dollars(sum(known))}" if known else "")]
    if unknown:
        lines.append(f"No price known for {', '.join(visible_text(m) for m in unknown)}: tokens only.")
    side_priced = False
    for purpose, label in SIDE_LABELS.items():
        if purpose not in llm.side_usage_by_purpose:
            continue
        count, used = llm.side_usage_by_purpose[purpose]
        noun = "side query" if count == 1 else "side queries"
        dollars = estimate_cost(session.settings.side_model, used)
        side_priced = side_priced or dollars is not None
        price = f" · ≈ {format_dollars(dollars)}" if dollars is not None else ""
        lines.append(
            f"{label}: {count:,} {noun}, input {used.input_tokens:,}, "
            f"output {used.output_tokens:,}{price} (not counted above)"
        )
    if known or side_priced:
        lines.append(f"An estimate from list prices checked {PRICES_CHECKED}; your bill may differ.")
    if (cap := session.agent.spend.cap) is not None:
        lines.append(
            f"Spend cap: {format_dollars(cap)} for this run (--max-cost or maxCostUsd), "
            f"≈ {format_dollars(spent(llm))} spent; a call that could pass it is not made."
        )
        if (
            unchecked := unchecked_warning(cap, [session.agent.model, session.settings.side_model])
        ) is not None:
            lines.append(unchecked)
    return lines


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
