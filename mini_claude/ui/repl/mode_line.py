"""The permission mode under the prompt, whenever it is not the default (bypass most strongly),
and Shift+Tab to cycle it: default → accept-edits → plan (→ bypass, only when started in it).

Drawn as a line of the prompt's own layout, below the input: prompt-toolkit's bottom toolbar is
drawn only once the terminal has said how many rows are below the cursor, and some never do.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.filters import Condition, has_completions, is_done
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import ConditionalContainer, FormattedTextControl, HSplit, Window

CYCLE_HINT = "(shift+tab to cycle)"
MODE_LINES = {
    "accept-edits": ("⏵⏵ accept edits on", "bold"),
    "plan": ("⏸ plan mode on: nothing changes until you approve a plan", "bold"),
    "bypass": ("⚠ BYPASS PERMISSIONS ON: nothing asks first", "bold reverse"),
}
COLOURS = {"accept-edits": "ansimagenta", "plan": "ansicyan", "bypass": "ansired"}


def mode_line(mode: str, *, plain: bool) -> StyleAndTextTuples:
    """The line for `mode`; nothing for the default mode."""
    if mode not in MODE_LINES:
        return []
    text, style = MODE_LINES[mode]
    colour = "" if plain else f" {COLOURS[mode]}"
    return [(style + colour, text), ("", " "), ("italic", CYCLE_HINT)]


def add_mode_line(session: PromptSession[str], mode: Callable[[], str], *, plain: bool) -> None:
    """Show the mode line under `session`'s input while the prompt is being edited."""
    line = ConditionalContainer(
        Window(
            FormattedTextControl(lambda: mode_line(mode(), plain=plain)), height=1, dont_extend_height=True
        ),
        filter=Condition(lambda: mode() in MODE_LINES) & ~is_done,
    )
    root = session.layout.container
    assert isinstance(root, HSplit)
    root.children.append(line)


def bind_mode_cycle(bindings: KeyBindings, next_mode: Callable[[], str]) -> None:
    """Shift+Tab cycles the mode (unless a completion menu is open: there it goes back a choice)."""

    @bindings.add("s-tab", filter=~has_completions)
    def _cycle(event: KeyPressEvent) -> None:
        next_mode()
        event.app.invalidate()
