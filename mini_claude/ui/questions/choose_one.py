"""Choosing one row of a list: ↑↓ (Ctrl+P/N) and PgUp/PgDn move, Enter chooses, Esc, Ctrl+C or
Ctrl+D cancel. `choose_one` is a short list (`/model`, `/rewind`) whose rows the caller lays out
for the width they are given and makes visible; it scrolls when longer than MAX_ROWS. `run_list`
runs those keys over another layout (the session picker, `repl/session_picker.py`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from prompt_toolkit.layout import Layout
    from prompt_toolkit.styles import Style

T = TypeVar("T")
MAX_ROWS = 10
MIN_WIDTH = 20
ESCAPE_WAIT_SECONDS = 0.1  # a lone Esc is told from an arrow key's sequence within this time
HINT = "↑↓ move · Enter choose · Esc cancel"


def choose_one(title: str, count: int, row: Callable[[int, int], str], *, selected: int = 0) -> int | None:
    """The index chosen among `count` rows (`row(index, width)` draws one), or None: cancelled."""
    from prompt_toolkit.application import get_app
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window

    state = {"selected": min(max(selected, 0), count - 1), "top": 0}
    height = min(MAX_ROWS, count)

    def fragments() -> StyleAndTextTuples:
        width = max(get_app().output.get_size().columns - 3, MIN_WIDTH)
        chosen = state["selected"]
        top = min(max(state["top"], chosen - height + 1), chosen)
        state["top"] = top
        shown: StyleAndTextTuples = [("bold", title + "\n")]
        for index in range(top, min(top + height, count)):
            here = index == chosen
            shown.append(("reverse" if here else "", ("› " if here else "  ") + row(index, width) + "\n"))
        shown.append(("italic", HINT))
        return shown

    def move(rows: int) -> None:
        state["selected"] = min(max(state["selected"] + rows, 0), count - 1)

    layout = Layout(Window(FormattedTextControl(fragments), dont_extend_height=True))
    return run_list(layout, move, lambda: state["selected"], page=lambda: height)


def run_list(
    layout: Layout,
    move: Callable[[int], None],
    chosen: Callable[[], T | None],
    *,
    page: Callable[[], int],
    style: Style | None = None,
) -> T | None:
    """Run `layout` with the list's keys: `move(rows)` (by one, or by `page()` rows), Enter
    answers `chosen()` (when it is not None); None when cancelled or the terminal went away."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    keys = KeyBindings()
    steps: dict[tuple[str, ...], Callable[[], int]] = {
        ("up", "c-p"): lambda: -1,
        ("down", "c-n"): lambda: 1,
        ("pageup",): lambda: -page(),
        ("pagedown",): page,
    }
    for names, step in steps.items():
        for name in names:
            keys.add(name)(lambda event, step=step: move(step()))

    @keys.add("enter")
    def _enter(event: KeyPressEvent) -> None:
        if (result := chosen()) is not None:
            event.app.exit(result=result)

    @keys.add("escape", eager=True)
    @keys.add("c-c")
    @keys.add("c-d")
    def _cancel(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    app: Application[T | None] = Application(
        layout=layout, key_bindings=keys, erase_when_done=True, style=style
    )
    app.ttimeoutlen = ESCAPE_WAIT_SECONDS
    try:
        return app.run()
    except (EOFError, OSError):  # the terminal went away: nothing chosen
        return None
