"""The model's thinking on screen: collapsed to one dim line per block as it completes (its length,
and the key that shows it), and the last reply's thinking in full on Ctrl+O at the prompt.

Collapsed rather than streamed: thinking is often longer than the answer it leads to, and read
only now and then. Its text is the model's: made visible (`visible_lines`) before it is printed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_claude.core.events import ThinkingBlock
from mini_claude.core.untrusted import visible_lines

if TYPE_CHECKING:
    from prompt_toolkit.key_binding import KeyBindings
    from rich.console import Console

SHOW_KEY = "Ctrl+O"
REDACTED_LINE = "✻ Thinking, encrypted by the API's safety systems (sent back to the model as it came)"
NONE_KEPT = "No thinking in the last reply (--thinking, or /think, asks the model to think first)."


class ThinkingKept:
    """The thinking blocks of the latest turn that had some, for SHOW_KEY."""

    def __init__(self) -> None:
        self.blocks: list[ThinkingBlock] = []
        self._turn_over = False

    def add(self, block: ThinkingBlock) -> None:
        if self._turn_over:  # the first thinking of a new turn: the last turn's is not shown again
            self.blocks, self._turn_over = [], False
        self.blocks.append(block)

    def turn_ended(self) -> None:
        self._turn_over = True


def thinking_line(block: ThinkingBlock) -> str | None:
    """The collapsed line of a thinking block; None for one without text (a model that omits it)."""
    if block.redacted:
        return REDACTED_LINE
    words = len(block.text.split())
    if not words:
        return None
    return f"✻ Thinking, {words:,} word{'s' if words != 1 else ''} ({SHOW_KEY} shows it)"


def bind_show_key(bindings: KeyBindings, console: Console, kept: ThinkingKept) -> None:
    """SHOW_KEY at the prompt prints `kept` in full above it."""
    from prompt_toolkit.application import run_in_terminal

    bindings.add("c-o")(lambda _event: run_in_terminal(lambda: show_thinking(console, kept)))


def show_thinking(console: Console, kept: ThinkingKept) -> None:
    """The last turn's thinking in full, dimmed, each block after a rule of its own."""
    shown = [block for block in kept.blocks if block.redacted or block.text.strip()]
    if not shown:
        console.print(NONE_KEPT, style="dim", markup=False, highlight=False)
        return
    for block in shown:
        text = "(encrypted by the API's safety systems)" if block.redacted else block.text.strip()
        console.print("✻ Thinking", style="dim bold", markup=False, highlight=False)
        console.print(visible_lines(text), style="dim", markup=False, highlight=False)
