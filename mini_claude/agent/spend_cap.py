"""The spend cap (`--max-cost`, `maxCostUsd`): no model call is made that could take what this run
has spent past the cap, and a turn stops as soon as a call did.

Spent: every call of this run (the conversation's, compaction's, the side queries') at list prices
(llm/pricing.py). What a call could cost is judged before it is made, at the model's price: its
prompt as the context window's estimate counts it, all of it as uncached input, and the whole of
its max_tokens as output. So the cap holds unless a price is unknown: a model not in the price
table cannot be held to it, which `unchecked_warning` says in a line at start.
"""

from __future__ import annotations

from mini_claude.agent.endings import Ending, TurnStopped
from mini_claude.core.events import UsageReport
from mini_claude.llm.client import ModelClient
from mini_claude.llm.pricing import estimate_cost, format_dollars


def spent(llm: ModelClient) -> float:
    """Dollars this run's calls cost at list prices (calls to models without a price count 0)."""
    with_prices = [estimate_cost(model, used) for model, used in llm.usage_by_model.items()]
    side = estimate_cost(llm.settings.side_model, llm.side_usage_total) if llm.side_queries else None
    return sum(dollars for dollars in (*with_prices, side) if dollars is not None)


def unchecked_warning(cap: float, models: list[str]) -> str | None:
    """One line when some of `models` have no known price, so the cap cannot hold for them."""
    unknown = [model for model in dict.fromkeys(models) if estimate_cost(model, UsageReport()) is None]
    if not unknown:
        return None
    return (
        f"No price is known for {', '.join(unknown)}: the spend cap of {format_dollars(cap)} cannot be "
        "checked for its calls (prices are in mini_claude/llm/pricing.py)."
    )


class SpendCap:
    """Checks each conversation call against `cap` dollars (None: no cap, nothing is checked)."""

    def __init__(self, cap: float | None, llm: ModelClient) -> None:
        self.cap = cap
        self.llm = llm

    def before_call(self, model: str, prompt_tokens: int, max_tokens: int) -> None:
        """Raise TurnStopped when a call of `prompt_tokens` that may write `max_tokens` could take
        the spending past the cap."""
        if self.cap is None:
            return
        most = estimate_cost(model, UsageReport(input_tokens=prompt_tokens, output_tokens=max_tokens))
        so_far = spent(self.llm)
        if most is not None and so_far + most > self.cap:
            raise _stopped(
                f"Stopped: the next model call could cost up to {format_dollars(most)}, past the spend "
                f"cap of {format_dollars(self.cap)} ({format_dollars(so_far)} spent)."
            )

    def after_call(self) -> None:
        """Raise TurnStopped when the spending has passed the cap (the reply is kept; its tool
        calls do not run)."""
        if self.cap is not None and (so_far := spent(self.llm)) > self.cap:
            cap = format_dollars(self.cap)
            raise _stopped(f"Stopped: spend cap of {cap} reached ({format_dollars(so_far)} spent).")


def _stopped(line: str) -> TurnStopped:
    return TurnStopped(Ending("spend_cap", line, "spend_cap"))
