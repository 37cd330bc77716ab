"""`/cost`: the session's tokens and, for models with a known price, what they cost; the spend cap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_claude.agent.spend_cap import spent, unchecked_warning
from mini_claude.core.untrusted import visible_text
from mini_claude.llm.pricing import PRICES_CHECKED, estimate_cost, format_dollars

if TYPE_CHECKING:
    from mini_claude.app.session import Session

# The side queries, one line for each purpose (llm/client.py counts them by it), in this order.
SIDE_LABELS = {"recall": "Memory recall and # notes", "tidy": "Memory tidy", "web": "Web fetch prompts"}


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
        names = ", ".join(visible_text(m) for m in unknown)
        lines.append(f"Price unknown for {names} (not in mini-claude's price list): tokens only.")
    side_priced = False
    for purpose, label in SIDE_LABELS.items():
        if purpose not in llm.side_usage_by_purpose:
            continue
        count, used = llm.side_usage_by_purpose[purpose]
        noun = "side query" if count == 1 else "side queries"
        dollars = estimate_cost(session.settings.side_model, used)
        side_priced = side_priced or dollars is not None
        price = f" · ≈ {format_dollars(dollars)}" if dollars is not None else " · price unknown"
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
