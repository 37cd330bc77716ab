"""The plan question: the plan the model presents with exit_plan_mode, rendered, and one key to
answer it — `y`/`1` approve and accept edits, `2` approve and ask for each edit, `n`/`3` keep
planning, then a line saying what to change (Enter alone, Esc or Ctrl+C: change nothing, and the
turn ends). As a permission question, it takes no key in its first moment."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from mini_claude.core.paths import visible_path
from mini_claude.tools.base import PlanAnswer, PlanProposal
from mini_claude.ui.questions.key_answer import QUESTION_GRACE_S, read_key_answer

if TYPE_CHECKING:
    from rich.console import Console

PLAN_KEYS = {
    "y": ("accept-edits", "yes, and accept edits"),
    "1": ("accept-edits", "yes, and accept edits"),
    "2": ("ask", "yes, and ask for each edit"),
    "n": ("keep-planning", "keep planning"),
    "3": ("keep-planning", "keep planning"),
}
CANCEL = ("keep-planning", "keep planning")
PLAN_OPTIONS = (
    "Approve the plan? [y]es and accept edits, [2] yes and ask for each edit, [n]o, keep planning: "
)
CHANGES_PROMPT = "What should change? (Enter alone: nothing now) "

ReadLine = Callable[[str], str]  # one line of input; "" for Esc, Ctrl+C or Ctrl+D


def present_plan(
    proposal: PlanProposal, console: Console, *, plain: bool, read_line: ReadLine | None = None
) -> PlanAnswer:
    takes_keys_at = time.monotonic() + QUESTION_GRACE_S
    show_plan(proposal, console, plain=plain)
    choice = read_key_answer(PLAN_OPTIONS, PLAN_KEYS, cancel=CANCEL, plain=plain, takes_keys_at=takes_keys_at)
    if choice != "keep-planning":
        return PlanAnswer(choice)  # type: ignore[arg-type]
    return PlanAnswer("keep-planning", (read_line or read_one_line)(CHANGES_PROMPT))


def show_plan(proposal: PlanProposal, console: Console, *, plain: bool) -> None:
    from rich.rule import Rule

    console.print(Rule("Plan", style="dim") if not plain else "── Plan ──")
    if plain:
        console.print(proposal.plan, markup=False, highlight=False)
    else:
        from mini_claude.ui.render.live_tail import markdown_view

        console.print(markdown_view(proposal.plan))
    saved = (
        visible_path(str(proposal.saved)) if proposal.saved is not None else "not saved (see the debug log)"
    )
    console.print(f"Plan saved: {saved}", style="dim", markup=False, highlight=False)


def read_one_line(message: str) -> str:
    """One line typed after a question (what a plan should change); "" for Esc, Ctrl+C, Ctrl+D."""
    from prompt_toolkit import prompt
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    bindings = KeyBindings()

    @bindings.add("escape", eager=True)
    def _cancel(event: KeyPressEvent) -> None:
        event.app.exit(result="")

    try:
        return prompt(message, key_bindings=bindings)
    except (EOFError, KeyboardInterrupt, OSError):
        return ""
