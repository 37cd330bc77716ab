"""The transcript view (Ctrl+O at the prompt): the whole conversation on a screen of its own, every
tool call with its input and its output as the model read it, thinking when there is some. It
opens at the end; ↑↓ (j/k), PgUp/PgDn (space/b), Home/End (g/G) scroll; Esc or q leaves, and the
prompt is back as it was. Every text is made visible before it is laid out."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mini_claude.core.untrusted import visible_lines
from mini_claude.ui.conversation.transcript_text import Entry

if TYPE_CHECKING:
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import StyleAndTextTuples

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


def transcript_app(entries: list[Entry]) -> Application[None]:
    """The view, to run until Esc or q (full screen: the scrollback is left as it was). The lines
    are a read-only buffer: prompt-toolkit wraps them and scrolls them (its pager keys' own
    functions), the cursor hidden and starting at the end."""
    from prompt_toolkit.application import Application as App
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.document import Document
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.key_binding.bindings import scroll
    from prompt_toolkit.layout import BufferControl, FormattedTextControl, HSplit, Layout, Window
    from prompt_toolkit.lexers import Lexer

    lines = entry_lines(entries)
    text = "\n".join(line for _, line in lines)
    buffer = Buffer(document=Document(text, len(text)), read_only=True)

    class LineStyles(Lexer):
        def lex_document(self, document: Document) -> Callable[[int], StyleAndTextTuples]:
            return lambda number: [(lines[number][0], document.lines[number])]

    def to(position: int) -> None:
        buffer.cursor_position = position

    keys = KeyBindings()
    moves = {
        ("up", "k"): scroll.scroll_one_line_up,
        ("down", "j"): scroll.scroll_one_line_down,
        ("pageup", "b", "c-b"): scroll.scroll_page_up,
        ("pagedown", "space", "c-f"): scroll.scroll_page_down,
        ("home", "g"): lambda event: to(0),
        ("end", "G"): lambda event: to(len(text)),
    }
    for names, action in moves.items():
        for name in names:
            keys.add(name)(action)

    @keys.add("escape", eager=True)
    @keys.add("q")
    @keys.add("c-o")
    @keys.add("c-c")
    def _leave(event: KeyPressEvent) -> None:
        event.app.exit()

    body = Window(BufferControl(buffer, lexer=LineStyles()), wrap_lines=True, always_hide_cursor=True)
    footer = Window(FormattedTextControl([("reverse", " " + FOOTER)]), height=1)
    app: Application[None] = App(layout=Layout(HSplit([body, footer])), key_bindings=keys, full_screen=True)
    app.ttimeoutlen = ESCAPE_WAIT_SECONDS
    return app
