"""Where the turn loop lets hooks in, and what their answer can say: the seam between the agent,
which calls a `TurnHooks` at fixed points, and extensions/hooks, which implements it (app/ wires
them; the agent never imports extensions). Plain values only, so both sides import this alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HookVerdict:
    """What the hooks of one point said, together."""

    block: str | None = None  # the action does not happen (a tool call, the end of a turn); why
    context: tuple[str, ...] = ()  # texts for the model, wrapped already
    stop: str | None = None  # `continue: false`: the turn ends here; why, for the user


PASS = HookVerdict()


class TurnHooks:
    """The points, each passing when no hook runs there: used as it is, it is a session without
    hooks; extensions/hooks overrides every point, a sub-agent's (agent/subagents) a few."""

    def prompt_submitted(self, prompt: str) -> HookVerdict:
        """Before a message joins the conversation: a block keeps it out (its reason is the user's)."""
        return PASS

    def before_tool(self, call_id: str, name: str, tool_input: dict[str, Any]) -> HookVerdict:
        """Before a tool call runs: a block answers it with the reason, unrun."""
        return PASS

    def after_tool(
        self, call_id: str, name: str, tool_input: dict[str, Any], response: dict[str, Any] | None
    ) -> HookVerdict:
        """After it (`response` None: it was stopped, or never ran): what the model should read
        with its result. Always called once after `before_tool`."""
        return PASS

    def runs_for(self, tool: str) -> bool:
        """Whether hooks run before or after a call of `tool` (such calls run one at a time)."""
        return False

    def stopping(self, again: bool) -> HookVerdict:
        """The model ended its turn (`again`: it went on before because of a block here): a block
        makes it go on, its reason the model's next instruction."""
        return PASS

    def before_compaction(self, trigger: str, focus: str | None) -> None:
        """The conversation is about to be summarised (`manual` or `auto`)."""

    def turn_ended(self) -> None:
        """The turn is over, however it ended (what was allowed for it ends too)."""
