"""Shift+Enter as a line break, where the terminal sends it as a key of its own.

A terminal set to report modified keys sends Shift+Enter as CSI u (`ESC [13;2u`: kitty, WezTerm,
iTerm2, foot) or as xterm's modifyOtherKeys (`ESC [27;2;13~`). prompt-toolkit reads the first as
Esc and the text `[13;2u` typed into the message, and the second as Enter, which sends it. Both
become Ctrl+J, the line break the REPL binds (so a question reads them as a key it does not take,
never as its Enter). A terminal that sends Shift+Enter as a plain Enter cannot be told apart.
"""

from __future__ import annotations

from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.keys import Keys

SHIFT_ENTER_SEQUENCES = ("\x1b[13;2u", "\x1b[27;2;13~")


def read_shift_enter_as_line_break() -> None:
    """Teach prompt-toolkit's key parser the sequences; call it before the first prompt reads a key
    (the parser remembers which beginnings of a sequence it has looked up)."""
    for sequence in SHIFT_ENTER_SEQUENCES:
        ANSI_SEQUENCES[sequence] = Keys.ControlJ
