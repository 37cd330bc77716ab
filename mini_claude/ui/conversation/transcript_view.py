"""The transcript view (Ctrl+O at the prompt): the whole conversation on a screen of its own, every
tool call with its input and its output as the model read it, thinking when there is some. It
opens at the end; ↑↓ (j/k), PgUp/PgDn (space/b), Home/End (g/G) scroll; Esc or q leaves, and the
prompt is back as it was. Every text is made visible before it is laid out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mini_claude.core.untrusted import visible_lines
from mini_claude.ui.conversation.transcript_text import Entry

if TYPE_CHECKING:
    from prompt_toolkit.application import Application

TAB_SIZE = 4
ESCAPE_WAIT_SECONDS = 0.05
FOOTER = "transcript · ↑↓ PgUp PgDn Home End scroll · Esc or q back to the prompt"
EMPTY = "Nothing said yet in this conversation."
STYLES = {
    "user": "bold",
    "reply": "",
    "thinking": "italic fg:ansibrightblack",
    "call": "bold fg:ansigreen",
    "input": "fg:ansibrightblack",
    "output": "",
    "error": "fg:ansired",
    "note": "fg:ansibrightblack",
}

StyledLine = tuple[str, str]  # (style, text): one line of the view before wrapping


def entry_lines(entries: list[Entry]) -> list[StyledLine]:
    lines: list[StyledLine] = []
    for entry in entries:
        if lines:
            lines.append(("", ""))
        lines += _lines_of(entry)
    return lines or [(STYLES["note"], EMPTY)]


def _lines_of(entry: Entry) -> list[StyledLine]:
    text = visible_lines(entry.text.rstrip()).expandtabs(TAB_SIZE)
    title = visible_lines(entry.title).replace("\n", " ")
    body = text.split("\n") if text else []
    if entry.kind == "user":
        return [(STYLES["user"], ("> " if index == 0 else "  ") + line) for index, line in enumerate(body)]
    if entry.kind == "reply":
        return [(STYLES["reply"], line) for line in body]
    if entry.kind == "thinking":
        return [(STYLES["thinking"], "✻ thinking"), *((STYLES["thinking"], "  " + line) for line in body)]
    if entry.kind == "call":
        return [(STYLES["call"], f"● {title}"), *((STYLES["input"], "    " + line) for line in body)]
    style = STYLES["error"] if entry.is_error else STYLES["output" if entry.kind == "output" else "note"]
    return [(STYLES["note"], f"  ⎿ {title}"), *((style, "    " + line) for line in body)]


def wrapped(lines: list[StyledLine], width: int) -> list[StyledLine]:
    """Each line cut into rows of at most `width` cells (wide characters take two)."""
    from prompt_toolkit.utils import get_cwidth

    rows: list[StyledLine] = []
    for style, line in lines:
        row: list[str] = []
        used = 0
        for char in line:
            cells = get_cwidth(char)
            if used + cells > width and row:
                rows.append((style, "".join(row)))
                row, used = [], 0
            row.append(char)
            used += cells
        rows.append((style, "".join(row)))
    return rows


@dataclass
class _Scroll:
    lines: list[StyledLine]
    top: int | None = None  # None: at the end
    _cache: tuple[int, list[StyledLine]] = field(default=(0, []))

    def rows(self, width: int) -> list[StyledLine]:
        if self._cache[0] != width:
            self._cache = (width, wrapped(self.lines, width))
        return self._cache[1]


def transcript_app(entries: list[Entry]) -> Application[None]:
    """The view, to run until Esc or q (full screen: the scrollback is left as it was)."""
    from prompt_toolkit.application import Application as App
    from prompt_toolkit.application import get_app
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import FormattedTextControl, HSplit, Layout, Window

    scroll = _Scroll(entry_lines(entries))

    def screen() -> tuple[int, int]:
        size = get_app().output.get_size()
        return max(size.columns - 1, 10), max(size.rows - 1, 1)

    def visible() -> StyleAndTextTuples:
        width, height = screen()
        rows = scroll.rows(width)
        last_top = max(0, len(rows) - height)
        top = last_top if scroll.top is None else min(max(scroll.top, 0), last_top)
        scroll.top = None if top == last_top else top
        shown: StyleAndTextTuples = []
        for style, text in rows[top : top + height]:
            shown += [(style, text), ("", "\n")]
        return shown[:-1]

    def move(rows: int) -> None:
        width, height = screen()
        last_top = max(0, len(scroll.rows(width)) - height)
        top = min(max((last_top if scroll.top is None else scroll.top) + rows, 0), last_top)
        scroll.top = None if top == last_top else top

    def page(direction: int) -> None:
        move(direction * max(1, screen()[1] - 2))

    keys = KeyBindings()
    moves = {
        ("up", "k"): lambda: move(-1),
        ("down", "j"): lambda: move(1),
        ("pageup", "b", "c-b"): lambda: page(-1),
        ("pagedown", "space", "c-f"): lambda: page(1),
        ("home", "g"): lambda: move(-len(scroll.lines) * 10),
        ("end", "G"): lambda: move(len(scroll.lines) * 10),
    }
    for names, action in moves.items():
        for name in names:
            keys.add(name)(lambda event, action=action: action())

    @keys.add("escape", eager=True)
    @keys.add("q")
    @keys.add("c-o")
    @keys.add("c-c")
    def _leave(event: KeyPressEvent) -> None:
        event.app.exit()

    body = Window(FormattedTextControl(visible), wrap_lines=False)
    footer = Window(FormattedTextControl([("reverse", " " + FOOTER)]), height=1)
    app: Application[None] = App(layout=Layout(HSplit([body, footer])), key_bindings=keys, full_screen=True)
    app.ttimeoutlen = ESCAPE_WAIT_SECONDS
    return app
