r"""The prompt's own keys: Alt+Enter, Ctrl+J and `\` Enter for a line break; Ctrl+C clearing the
line, then (twice on an empty line) exiting; and Shift+Enter as a line break, where the terminal
sends it as a key of its own.

A terminal set to report modified keys sends Shift+Enter as CSI u (`ESC [13;2u`: kitty, WezTerm,
iTerm2, foot) or as xterm's modifyOtherKeys (`ESC [27;2;13~`). prompt-toolkit reads the first as
Esc and the text `[13;2u` typed into the message, and the second as Enter, which sends it. Both
become Ctrl+J, the line break the REPL binds (so a question reads them as a key it does not take,
never as its Enter). A terminal that sends Shift+Enter as a plain Enter cannot be told apart.
"""

from __future__ import annotations

from prompt_toolkit.application import get_app, run_in_terminal
from prompt_toolkit.filters import Condition
from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys

SHIFT_ENTER_SEQUENCES = ("\x1b[13;2u", "\x1b[27;2;13~")
EXIT_HINT = "Press Ctrl+C again to exit."


def read_shift_enter_as_line_break() -> None:
    """Teach prompt-toolkit's key parser the sequences; call it before the first prompt reads a key
    (the parser remembers which beginnings of a sequence it has looked up)."""
    for sequence in SHIFT_ENTER_SEQUENCES:
        ANSI_SEQUENCES[sequence] = Keys.ControlJ


class ExitGuard:
    """Ctrl+C on the prompt clears the line; on an empty line it arms, and a second one exits."""

    def __init__(self) -> None:
        self.armed = False

    def press(self, line_has_text: bool) -> str:
        """What a Ctrl+C does now: "clear" the line, "arm" the exit (show EXIT_HINT) or "exit"."""
        if line_has_text:
            self.armed = False
            return "clear"
        if self.armed:
            return "exit"
        self.armed = True
        return "arm"

    def on_ctrl_c(self, event) -> None:  # type: ignore[no-untyped-def]
        buffer = event.current_buffer
        action = self.press(bool(buffer.text))
        if action == "clear":
            buffer.reset()
        elif action == "exit":
            event.app.exit(exception=EOFError)
        else:
            # Printed above the prompt: a bottom toolbar would need the terminal to answer CPR.
            run_in_terminal(lambda: print(EXIT_HINT))

    def disarm(self, *_: object) -> None:
        self.armed = False


def prompt_key_bindings(exit_guard: ExitGuard) -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    @bindings.add("c-j")
    def _newline(event) -> None:  # type: ignore[no-untyped-def]
        event.current_buffer.insert_text("\n")

    # `\` then Enter: the backslash becomes a line break, as in a shell. (A message that ends in a
    # backslash is sent by typing a space after it.)
    @bindings.add(
        "enter", filter=Condition(lambda: get_app().current_buffer.document.char_before_cursor == "\\")
    )
    def _backslash_newline(event) -> None:  # type: ignore[no-untyped-def]
        event.current_buffer.delete_before_cursor(1)
        event.current_buffer.insert_text("\n")

    bindings.add("c-c")(exit_guard.on_ctrl_c)
    # The key as a signal, while the prompt runs: pressed while the exit hint is printed (the
    # terminal is then briefly out of raw mode), or sent by `kill -INT`.
    bindings.add("<sigint>")(exit_guard.on_ctrl_c)
    return bindings
