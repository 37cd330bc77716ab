"""A question answered by one key press, no Enter: the permission question's `y`/`a`/`n`/`v`.

Esc, Ctrl+C and Ctrl+D answer `cancel`; any other key (Enter included: it may be left over from
an answer typed the old way) is ignored. The chosen answer stays on the line, for the scrollback.
Keys typed before the question appeared are not read here: the caller sets them aside
(`typeahead.typeahead_set_aside`).
"""

from __future__ import annotations

from collections.abc import Mapping

from prompt_toolkit.application import Application
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import FormattedTextControl, Layout, Window
from prompt_toolkit.output import ColorDepth

from mini_claude.untrusted import visible_text

ESCAPE_WAIT_S = 0.1  # how long a lone Esc waits to tell itself from the start of an arrow key
CANCEL_KEYS = ("escape", "c-c", "c-d")
ANSWER_STYLE = "bold"


def read_key_answer(
    prompt: str, answers: Mapping[str, tuple[str, str]], *, cancel: tuple[str, str], plain: bool
) -> str:
    """Show `prompt` and wait for a key of `answers` (key → (answer, word shown after the
    prompt)); upper case works too. Returns the answer, or `cancel`'s for Esc, Ctrl+C, Ctrl+D."""
    chosen: list[str] = []  # the word shown after the prompt once answered

    def fragments() -> list[tuple[str, str]]:
        return [("", visible_text(prompt)), (ANSWER_STYLE, " ".join(chosen)), ("[SetCursorPosition]", "")]

    bindings = KeyBindings()

    def answer_with(answer: str, word: str):  # type: ignore[no-untyped-def]
        def handler(event: KeyPressEvent) -> None:
            chosen.append(word)
            event.app.exit(result=answer)

        return handler

    for key, (answer, word) in answers.items():
        for variant in {key.lower(), key.upper()}:
            bindings.add(variant)(answer_with(answer, word))
    for key in CANCEL_KEYS:
        bindings.add(key)(answer_with(*cancel))
    bindings.add("<any>")(lambda event: None)  # everything else: no answer, nothing typed

    app: Application[str] = Application(
        layout=Layout(Window(FormattedTextControl(fragments), wrap_lines=True, dont_extend_height=True)),
        key_bindings=bindings,
        full_screen=False,
        erase_when_done=False,
        color_depth=ColorDepth.DEPTH_1_BIT if plain else None,
    )
    app.ttimeoutlen = ESCAPE_WAIT_S
    return app.run()
