"""Choosing the message `/rewind` goes back to (Up/Down, Enter; Esc cancels), then what to restore
with one key: the code and the conversation, the conversation only, or the code only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_claude.core.untrusted import visible_text
from mini_claude.ui.questions.key_answer import read_key_answer

if TYPE_CHECKING:
    from mini_claude.app.rewind import RewindPoint

MAX_ROWS = 10
MIN_WIDTH = 20
ESCAPE_WAIT_SECONDS = 0.1
BOTH, CONVERSATION, CODE, CANCEL = "both", "conversation", "code", "cancel"
RESTORE_KEYS = {
    BOTH: {"1": (BOTH, "code and conversation"), "b": (BOTH, "code and conversation")},
    CONVERSATION: {"2": (CONVERSATION, "conversation"), "c": (CONVERSATION, "conversation")},
    CODE: {"3": (CODE, "code"), "f": (CODE, "code")},
}
OPTIONS = {BOTH: "1 code and conversation", CONVERSATION: "2 conversation only", CODE: "3 code only"}
COMMANDS_MARK = "ran commands"


def point_row(point: RewindPoint, width: int) -> str:
    """`add new.py · 1 file changed · ran commands`, cut to `width`."""
    text = visible_text(" ".join(point.turn.text.split())) or "(no text)"
    notes = []
    if point.files_changed_then:
        count = point.files_changed_then
        notes.append(f"{count} file{'s' if count != 1 else ''} changed")
    if point.turn.ran_commands:
        notes.append(COMMANDS_MARK)
    tail = "".join(f" · {note}" for note in notes)
    room = max(width - len(tail), MIN_WIDTH // 2)
    if len(text) > room:
        text = text[: room - 1] + "…"
    return text + tail


def pick_point(points: list[RewindPoint]) -> RewindPoint | None:
    """The message chosen (newest first in the list), or None when the user cancelled."""
    from prompt_toolkit.application import Application, get_app
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, HSplit, Layout, Window

    newest_first = list(reversed(points))
    chosen = [0, 0]  # the selection, the first row on screen

    def width() -> int:
        return max(get_app().output.get_size().columns - 4, MIN_WIDTH)

    def rows() -> StyleAndTextTuples:
        height = min(MAX_ROWS, len(newest_first))
        selected, top = chosen
        top = min(max(top, selected - height + 1), selected)
        chosen[1] = top
        lines: StyleAndTextTuples = [("bold", "Rewind to just before which message?\n")]
        for index in range(top, min(top + height, len(newest_first))):
            mark = "› " if index == selected else "  "
            style = "reverse" if index == selected else ""
            lines.append((style, mark + point_row(newest_first[index], width()) + "\n"))
        lines.append(("italic", "↑↓ move · Enter choose · Esc cancel"))
        return lines

    keys = KeyBindings()

    @keys.add("up")
    @keys.add("c-p")
    def _up(event) -> None:  # type: ignore[no-untyped-def]
        chosen[0] = max(0, chosen[0] - 1)

    @keys.add("down")
    @keys.add("c-n")
    def _down(event) -> None:  # type: ignore[no-untyped-def]
        chosen[0] = min(len(newest_first) - 1, chosen[0] + 1)

    @keys.add("enter")
    def _enter(event) -> None:  # type: ignore[no-untyped-def]
        event.app.exit(result=newest_first[chosen[0]])

    @keys.add("escape", eager=True)
    @keys.add("c-c")
    @keys.add("c-d")
    def _cancel(event) -> None:  # type: ignore[no-untyped-def]
        event.app.exit(result=None)

    app: Application[RewindPoint | None] = Application(
        layout=Layout(HSplit([Window(FormattedTextControl(rows), dont_extend_height=True)])),
        key_bindings=keys,
        erase_when_done=True,
    )
    app.ttimeoutlen = ESCAPE_WAIT_SECONDS
    return app.run()


def ask_what_to_restore(has_code: bool, *, plain: bool) -> str:
    """BOTH, CONVERSATION or CODE by one key; CANCEL for Esc. Without files to restore, only the
    conversation is offered."""
    offered = [BOTH, CONVERSATION, CODE] if has_code else [CONVERSATION]
    answers = {key: value for choice in offered for key, value in RESTORE_KEYS[choice].items()}
    options = ", ".join(OPTIONS[choice] for choice in offered)
    try:
        return read_key_answer(
            f"Restore: {options} (Esc: nothing): ", answers, cancel=(CANCEL, "nothing"), plain=plain
        )
    except (EOFError, OSError):
        return CANCEL
