"""What the permission mode is called on screen when it is not the default: one line, under the
prompt (`repl/mode_line.py`) and under a running turn's status (`live_region.py`) alike."""

from __future__ import annotations

from typing import NamedTuple

CYCLE_HINT = "(shift+tab to cycle)"


class ModeWords(NamedTuple):
    text: str
    emphasis: str  # "bold", or "bold reverse" for the mode that asks nothing
    colour: str  # a colour name both rich and prompt-toolkit (as `ansi` + it) know


MODE_WORDS = {
    "accept-edits": ModeWords("⏵⏵ accept edits on", "bold", "magenta"),
    "plan": ModeWords("⏸ plan mode on: nothing changes until you approve a plan", "bold", "cyan"),
    "bypass": ModeWords("⚠ BYPASS PERMISSIONS ON: nothing asks first", "bold reverse", "red"),
}
