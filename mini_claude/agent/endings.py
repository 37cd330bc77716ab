"""How a turn ends: each ending is an exception the turn loop raises, carrying the reason the
TurnEnded event reports and the notice that answers tool calls left without a result.

Apart from agent/loop.py so the loop reads as control flow (`raise Done`), with the endings listed in
one place.
"""

from __future__ import annotations


class TurnOver(Exception):
    """Ends the turn; `reason` becomes TurnEnded.reason, `unanswered` is the notice that answers
    tool calls left without a result."""

    reason = "done"
    unanswered = "interrupted"


class Done(TurnOver):
    """The model answered without asking for a tool."""


class TurnCapReached(TurnOver):
    reason = "turn_cap"


class ReplyCut(TurnOver):
    """The reply stopped at max_tokens with no tool call to run."""

    reason = "max_tokens"


class EndedByTool(TurnOver):
    """A tool call ended the turn: the user refused it at its question (the model is not called
    again; the prompt waits for the user), or a plan was presented where no one can answer."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason
        self.unanswered = "not_run_after_refusal" if reason == "refused" else "interrupted"

    def __str__(self) -> str:
        return ""


class ModelFailed(TurnOver):
    """The model call failed (after the SDK's retries); the message is one line for the user."""

    reason = "error"
    unanswered = "stream_failed"
