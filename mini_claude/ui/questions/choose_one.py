"""Choosing one row of a short list (`/model`, `/rewind`): ↑↓ (Ctrl+P/N) move, Enter chooses, Esc,
Ctrl+C or Ctrl+D cancel. The rows are laid out by the caller for the width they are given and made
visible there; the list scrolls when it is longer than MAX_ROWS."""

from __future__ import annotations

from collections.abc import Callable

MAX_ROWS = 10
MIN_WIDTH = 20
ESCAPE_WAIT_SECONDS = 0.1
HINT = "↑↓ move · Enter choose · Esc cancel"


def choose_one(title: str, count: int, row: Callable[[int, int], str], *, selected: int = 0) -> int | None:
    """The index chosen among `count` rows (`row(index, width)` draws one), or None: cancelled."""
    from prompt_toolkit.application import Application, get_app
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window

    state = {"selected": min(max(selected, 0), count - 1), "top": 0}

    def fragments() -> StyleAndTextTuples:
        width = max(get_app().output.get_size().columns - 3, MIN_WIDTH)
        height = min(MAX_ROWS, count)
        chosen = state["selected"]
        top = min(max(state["top"], chosen - height + 1), chosen)
        state["top"] = top
        shown: StyleAndTextTuples = [("bold", title + "\n")]
        for index in range(top, min(top + height, count)):
            here = index == chosen
            shown.append(("reverse" if here else "", ("› " if here else "  ") + row(index, width) + "\n"))
        shown.append(("italic", HINT))
        return shown

    keys = KeyBindings()

    @keys.add("up")
    @keys.add("c-p")
    def _up(event) -> None:  # type: ignore[no-untyped-def]
        state["selected"] = max(0, state["selected"] - 1)

    @keys.add("down")
    @keys.add("c-n")
    def _down(event) -> None:  # type: ignore[no-untyped-def]
        state["selected"] = min(count - 1, state["selected"] + 1)

    @keys.add("enter")
    def _enter(event) -> None:  # type: ignore[no-untyped-def]
        event.app.exit(result=state["selected"])

    @keys.add("escape", eager=True)
    @keys.add("c-c")
    @keys.add("c-d")
    def _cancel(event) -> None:  # type: ignore[no-untyped-def]
        event.app.exit(result=None)

    app: Application[int | None] = Application(
        layout=Layout(Window(FormattedTextControl(fragments), dont_extend_height=True)),
        key_bindings=keys,
        erase_when_done=True,
    )
    app.ttimeoutlen = ESCAPE_WAIT_SECONDS
    try:
        return app.run()
    except (EOFError, OSError):  # the terminal went away: nothing chosen
        return None
