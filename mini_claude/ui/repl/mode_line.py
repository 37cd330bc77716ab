"""The permission mode under the prompt, whenever it is not the default (bypass most strongly),
and Shift+Tab to cycle it: default → accept-edits → plan (→ bypass, only when started in it).

Drawn as a float on the row below the input's last line (prompt-toolkit's bottom toolbar is drawn
only once the terminal says how many rows are below the cursor, which some never do, and then
below the room kept for the completion menu); hidden while a menu is open or the cursor is on an
earlier line of the message, where it would cover text.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition, has_completions, is_done
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import ConditionalContainer, Float, FloatContainer, FormattedTextControl, Window

from mini_claude.ui.render.mode_words import CYCLE_HINT, MODE_WORDS


def mode_line(mode: str, *, plain: bool) -> StyleAndTextTuples:
    """The line for `mode`; nothing for the default mode."""
    if mode not in MODE_WORDS:
        return []
    text, emphasis, colour = MODE_WORDS[mode]
    style = emphasis if plain else f"{emphasis} ansi{colour}"
    return [(style, text), ("", " "), ("italic", CYCLE_HINT)]


def add_mode_line(session: PromptSession[str], mode: Callable[[], str], *, plain: bool) -> None:
    """Show the mode line under `session`'s input while the prompt is being edited."""

    def on_last_line() -> bool:
        document = get_app().current_buffer.document
        return document.cursor_position_row == document.line_count - 1

    shown = Condition(lambda: mode() in MODE_WORDS) & ~is_done & ~has_completions & Condition(on_last_line)
    control = FormattedTextControl(lambda: mode_line(mode(), plain=plain))
    line = ConditionalContainer(Window(control, height=1, dont_extend_height=True), filter=shown)
    floats = next(c for c in session.layout.walk() if isinstance(c, FloatContainer))
    floats.floats.append(Float(content=line, left=0, ycursor=True, transparent=True))


def bind_mode_cycle(bindings: KeyBindings, next_mode: Callable[[], str]) -> None:
    """Shift+Tab cycles the mode (unless a completion menu is open: there it goes back a choice)."""

    @bindings.add("s-tab", filter=~has_completions)
    def _cycle(event: KeyPressEvent) -> None:
        next_mode()
        event.app.invalidate()
