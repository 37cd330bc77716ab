"""A question answered by one key press, no Enter: the permission question's `y`/`a`/`n`/`v`
and the REPL's yes/no confirmations (`/memory rm`, `/memory tidy`).

Esc, Ctrl+C and Ctrl+D answer `cancel`; Enter answers only where a question has a default. Any
other key (Enter included elsewhere: it may be left over from an answer typed the old way)
answers nothing: a line under the question says which keys it takes, and the question stays.
The chosen answer stays on the line, for the scrollback. Keys typed before the question appeared
are not read here: the caller sets them aside (`typeahead.typeahead_set_aside`). A question that
can appear while the user is typing (a permission question, a plan) also takes no key pressed in
its first QUESTION_GRACE_S: its keys are shown only once it takes them, and a key pressed sooner
is shown with a line saying so, and the question waits.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import FormattedTextControl, Layout, Window
from prompt_toolkit.output import ColorDepth

from mini_claude.core.untrusted import marked_text, visible_text

QUESTION_GRACE_S = 0.4  # a key this soon after a question appears was meant for something else
ESCAPE_WAIT_S = 0.1  # how long a lone Esc waits to tell itself from the start of an arrow key
CANCEL_KEYS = ("escape", "c-c", "c-d")
CANCEL_KEY_NAME = "Esc"  # Ctrl+C and Ctrl+D answer the same; the hint names the usual one
ENTER_KEY_NAME = "Enter"
ANSWER_STYLE = "bold"
HINT_STYLE = "italic"  # not a colour: --plain shows it too
YES_NO = {"y": ("y", "yes"), "n": ("n", "no")}
NO = ("n", "no")
CANCELLED = ("cancel", "no")  # what Esc answers a yes/no question: shown as no, told apart


def read_key_answer(
    prompt: str,
    answers: Mapping[str, tuple[str, str]],
    *,
    cancel: tuple[str, str],
    plain: bool,
    enter: tuple[str, str] | None = None,
    takes_keys_at: float = 0.0,
) -> str:
    """Show `prompt` and wait for a key of `answers` (key → (answer, word shown after the
    prompt)); upper case works too. Returns the answer, `cancel`'s for Esc, Ctrl+C, Ctrl+D (and
    when there is no terminal to read), and `enter`'s (the default, when given) for Enter. Before
    `takes_keys_at` (time.monotonic()) no key answers but Ctrl+C, and the prompt is not shown yet."""
    chosen: list[str] = []  # the word shown after the prompt once answered
    hint: list[str] = []  # the line under the question after a key it does not take

    def ready() -> bool:
        return time.monotonic() >= takes_keys_at

    def fragments() -> StyleAndTextTuples:
        shown: StyleAndTextTuples = [
            # Hidden for its first moments (a key then is not its answer); nothing in it draws as nothing.
            ("", marked_text(prompt) if ready() or chosen else ""),
            (ANSWER_STYLE, " ".join(chosen)),
            ("[SetCursorPosition]", ""),
        ]
        if hint and not chosen:
            shown.append((HINT_STYLE, "\n" + hint[0]))
        return shown

    bindings = KeyBindings()

    def answer_with(answer: str, word: str, *, always: bool = False):  # type: ignore[no-untyped-def]
        def handler(event: KeyPressEvent) -> None:
            if not always and not ready():
                key = event.key_sequence[0].data if event.key_sequence else ""
                shown = visible_text(key) if key.isprintable() else "a key"
                hint[:] = [f"{shown} came too soon after the question appeared: press it again"]
                return
            chosen.append(word)
            event.app.exit(result=answer)

        return handler

    for key, (answer, word) in answers.items():
        for variant in {key.lower(), key.upper()}:
            bindings.add(variant)(answer_with(answer, word))
    for key in CANCEL_KEYS:
        bindings.add(key)(answer_with(*cancel, always=key == "c-c"))
    if enter is not None:
        bindings.add("enter")(answer_with(*enter))

    @bindings.add("<any>")
    def _not_an_answer(event: KeyPressEvent) -> None:  # nothing typed, nothing answered: say what is
        hint[:] = [keys_hint(answers, cancel=cancel, enter=enter)]

    async def show_when_ready() -> None:
        await asyncio.sleep(max(0.0, takes_keys_at - time.monotonic()))
        app.invalidate()

    app: Application[str] = Application(
        layout=Layout(Window(FormattedTextControl(fragments), wrap_lines=True, dont_extend_height=True)),
        key_bindings=bindings,
        full_screen=False,
        erase_when_done=False,
        color_depth=ColorDepth.DEPTH_1_BIT if plain else None,
    )
    app.ttimeoutlen = ESCAPE_WAIT_S

    def start_timer() -> None:
        app.create_background_task(show_when_ready())

    try:
        return app.run(pre_run=start_timer)
    except (EOFError, OSError):  # no terminal to answer on: nobody said yes, as for Esc
        return cancel[0]


def keys_hint(
    answers: Mapping[str, tuple[str, str]], *, cancel: tuple[str, str], enter: tuple[str, str] | None = None
) -> str:
    """`Press y/1 for yes, n/3/Esc for no`: every key the question takes, by what it answers."""
    keys_by_word: dict[str, list[str]] = {}
    for key, (_, word) in answers.items():
        keys_by_word.setdefault(word, []).append(key)
    if enter is not None:
        keys_by_word.setdefault(enter[1], []).append(ENTER_KEY_NAME)
    keys_by_word.setdefault(cancel[1], []).append(CANCEL_KEY_NAME)
    return "Press " + ", ".join(f"{'/'.join(keys)} for {word}" for word, keys in keys_by_word.items())


def confirm_by_key(question: str, *, plain: bool) -> bool | None:
    """`question [y/N]` answered by one key: `y` is yes; `n` and Enter (the default) are no; Esc,
    Ctrl+C, Ctrl+D and a terminal that went away are no too (so shown), returned as None: a
    caller may take them as cancelling more than this question (a tidy's whole review)."""
    answer = read_key_answer(f"{question} [y/N]: ", YES_NO, cancel=CANCELLED, enter=NO, plain=plain)
    return None if answer == CANCELLED[0] else answer == "y"
