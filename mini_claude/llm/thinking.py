"""What a call asks of the model's thinking, and what to ask a model that thinks another way.

`--thinking BUDGET` asks for extended thinking in its documented shape, `{"type": "enabled",
"budget_tokens": N}`, with N at least MIN_BUDGET and below the call's max_tokens. Newer models
(Claude 4.7 and later) think adaptively instead and refuse that shape with a 400 naming
`thinking.type.enabled`: such a model is asked again at once with ADAPTIVE (its thinking then
returned as a summary, which those models omit by default) and asked that way from then on.
Without `--thinking` no thinking field is sent: the model does what it does by default (newer
models think adaptively; their thinking blocks are kept and sent back all the same).
"""

from __future__ import annotations

import threading
from typing import Any

MIN_BUDGET = 1_024  # the API refuses a smaller budget_tokens
DEFAULT_BUDGET = 8_000
# Thinking counts against max_tokens: a reply may think its budget and still answer this much
# (max_tokens is raised where it would leave less; `room_note` says so).
MIN_ANSWER_TOKENS = 4_096
ADAPTIVE: dict[str, Any] = {"type": "adaptive", "display": "summarized"}
REFUSAL_MARK = "thinking.type.enabled"  # in the 400 of a model that thinks only adaptively


class BudgetRefused(Exception):
    """The model refused a thinking budget: it thinks adaptively (see the module's doc)."""


class ThinkingRequests:
    """The thinking field of each call; remembers (for the session, on any thread) the models
    that refused a budget."""

    def __init__(self) -> None:
        self._adaptive: set[str] = set()
        self._lock = threading.Lock()

    def field(self, model: str, budget: int | None, max_tokens: int) -> tuple[dict[str, Any] | None, int]:
        """The `thinking` field of a call to `model` (None: none sent) and the call's max_tokens,
        raised when the window-fitted `max_tokens` leaves no room for the smallest budget."""
        if budget is None:
            return None, max_tokens
        with self._lock:
            if model in self._adaptive:
                return dict(ADAPTIVE), max_tokens
        max_tokens = max(max_tokens, MIN_BUDGET + 1)
        return {"type": "enabled", "budget_tokens": max(MIN_BUDGET, min(budget, max_tokens - 1))}, max_tokens

    def refused(self, model: str, field: dict[str, Any] | None, status: int, detail: str) -> bool:
        """Whether an error answering a call with `field` says `model` takes no budget (then it is
        asked adaptively from now on)."""
        if field is None or field.get("type") != "enabled" or status != 400 or REFUSAL_MARK not in detail:
            return False
        with self._lock:
            self._adaptive.add(model)
        return True


def with_room_for(budget: int | None, max_tokens: int) -> int:
    """The max_tokens of a reply that may first think `budget` tokens (None: no budget)."""
    return max_tokens if budget is None else max(max_tokens, budget + MIN_ANSWER_TOKENS)


def room_note(budget: int | None, max_tokens: int) -> str | None:
    """One line when `with_room_for` raises `max_tokens`; None when it does not."""
    raised = with_room_for(budget, max_tokens)
    if raised == max_tokens:
        return None
    return (
        f"The thinking budget of {budget:,} tokens leaves too little of max_tokens ({max_tokens:,}, "
        f"MINI_CLAUDE_MAX_TOKENS) for the answer: replies may take up to {raised:,} tokens."
    )


def adaptive_notice(model: str) -> str:
    return (
        f"{model} takes no thinking budget: it thinks adaptively, deciding how much itself "
        "(its thinking is asked for as a summary)."
    )


def budget_problem(budget: int) -> str | None:
    """Why `budget` cannot be a thinking budget, in words for a flag or setting; None if it can."""
    if budget < MIN_BUDGET:
        return f"a thinking budget must be at least {MIN_BUDGET:,} tokens (the API's minimum), not {budget:,}"
    return None
