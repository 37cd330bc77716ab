"""How a turn ends: the value the turn loop returns, with the reason TurnEnded reports, the line the
user reads, and the notice that answers tool calls left without a result; and which stop reasons
of a reply end the turn.

Apart from agent/loop.py so the endings and their words are listed in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mini_claude.core.events import ToolEnding, TurnEndReason

# Stop reasons after which the reply's tool calls run ("pause_turn": the server paused a long turn,
# which goes on when the reply is sent back as it is, as the API documents).
CALLS_RUN = ("tool_use", "end_turn", "stop_sequence", "pause_turn")
CUT_OFF = ("max_tokens", "model_context_window_exceeded")  # the reply is incomplete


@dataclass(frozen=True)
class Ending:
    reason: TurnEndReason
    notice: str = ""  # one line for the user ("" for none)
    unanswered: str = "interrupted"  # the notice (prompts/notices.toml) answering calls left open
    note: str | None = None  # a notice for the model after them

    @property
    def level(self) -> Literal["warning", "error"]:
        return "error" if self.reason in ("error", "refused") else "warning"


class TurnStopped(Exception):
    """Raised anywhere in a step to end the turn with `ending` (a limit reached: the spend cap)."""

    def __init__(self, ending: Ending) -> None:
        super().__init__(ending.notice)
        self.ending = ending


DONE = Ending("done")
INTERRUPTED = Ending("interrupted", note="user_interrupted")
REPLY_CUT = Ending(
    "max_tokens",
    "The reply was cut off at the max_tokens limit (set MINI_CLAUDE_MAX_TOKENS to allow longer replies).",
)
WINDOW_FULL = Ending("max_tokens", "The reply was cut off: it filled the model's context window (/compact).")
WINDOW_NOT_SAID = (
    " (the server did not say how large its context window is: set MINI_CLAUDE_CONTEXT_WINDOW to it)"
)
# The API asks that a refused reply not be sent back (the conversation would be refused again).
REFUSED = Ending(
    "refused",
    "The model declined to go on (stop reason: refusal); its reply is not kept and none of its tool "
    "calls ran. Rephrase the request, or /clear to start over.",
)


def model_failed(why: str, *, window_unknown: bool = False) -> Ending:
    """The model call failed (after our retries); `why` is one line for the user. `window_unknown`:
    the request was too long for a window the server never said the size of."""
    return Ending("error", why + (WINDOW_NOT_SAID if window_unknown else ""), "stream_failed")


def stopped(why: str) -> Ending:
    """A hook stopped the turn (`continue: false`, a blocked prompt); `why` is for the user."""
    return Ending("stopped", why, "hook_stopped")


# A tool call ended the turn: the user said no at its question (the model is not called again; the
# prompt waits for the user), or a plan was printed where nobody can answer it.
REFUSED_BY_USER = Ending("refused_by_user", unanswered="not_run_after_refusal")
BY_TOOL: dict[ToolEnding, Ending] = {"refused_by_user": REFUSED_BY_USER, "plan_printed": DONE}


def turn_cap(max_turns: int) -> Ending:
    calls = "1 model call" if max_turns == 1 else f"{max_turns:,} model calls"
    return Ending("turn_cap", f"Stopped after {calls} in one turn (the --max-turns limit).")


def internal_error(error: Exception) -> Ending:
    return Ending("error", f"Internal error: {type(error).__name__}: {error} (details in the debug log)")


def by_stop_reason(stop_reason: str | None, has_calls: bool) -> Ending | None:
    """How a stored reply's stop reason ends the turn; None when its tool calls run, or when the
    turn goes on without any (a paused turn). A cut-off reply with calls is the loop's to answer."""
    if stop_reason == "refusal":
        return REFUSED
    if stop_reason in CUT_OFF:
        return REPLY_CUT if stop_reason == "max_tokens" else WINDOW_FULL
    if stop_reason not in CALLS_RUN:
        return Ending(
            "error",
            f"The model server ended the reply with a stop reason mini-claude does not know "
            f"({stop_reason!r}); the reply is kept, and none of its tool calls ran.",
            "unknown_stop_reason",
        )
    return None if has_calls or stop_reason == "pause_turn" else DONE
