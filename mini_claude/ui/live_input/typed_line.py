"""What the user types while a reply runs, kept as they would see it in a prompt: the line being
typed, and the messages they queued with Enter (shown under the reply until the turn ends, then
sent as one message; the line still being typed waits in the next prompt). Up on an empty line
takes the last queued message back to edit. A paste (bracketed by the terminal) is text, line
breaks and all: it never queues anything by itself. Shift+Tab is no text: it cycles the permission
mode, as at the prompt. Keys come in as prompt-toolkit parses them.
"""

from __future__ import annotations

import codecs
import threading
from collections.abc import Callable

from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

from mini_claude.ui.render.live_region import Typed

ENTER = KeyPress(Keys.ControlM, "\r")
NEWLINE_KEYS = (Keys.ControlJ,)  # Ctrl+J, Shift+Enter (terminal_keys.py maps it here)
DELETE_KEYS = (Keys.Backspace, Keys.ControlH)


class TypedLine:
    """Fed the terminal's bytes from the turn-keys thread; read by the renderer's thread."""

    def __init__(
        self, on_change: Callable[[], None] = lambda: None, on_shift_tab: Callable[[], object] = lambda: None
    ) -> None:
        self._on_change = on_change
        self._on_shift_tab = on_shift_tab
        self._shift_tabs = 0  # pressed in what was just fed: the mode cycles once the lock is let go
        self._lock = threading.Lock()
        self._draft = ""
        self._queued: list[str] = []
        self._end_of_input = False  # Ctrl+D on an empty line: the next prompt gets it
        self._after_escape = False  # Alt+Enter arrives as Esc, then Enter
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self._parser = Vt100Parser(self._key)

    def feed(self, data: bytes) -> None:
        with self._lock:
            before = (self._draft, len(self._queued))
            self._parser.feed(self._decoder.decode(data))
            changed = before != (self._draft, len(self._queued)) or self._shift_tabs > 0
            shift_tabs, self._shift_tabs = self._shift_tabs, 0
        for _ in range(shift_tabs):
            self._on_shift_tab()
        if changed:
            self._on_change()

    def snapshot(self) -> Typed:
        with self._lock:
            return Typed(tuple(self._queued), self._draft)

    def take_keys(self) -> list[KeyPress]:
        """Everything typed, as keys for the next prompt: the queued messages as one message and
        its Enter, then the line being typed (no Enter: it waits to be finished); it is all
        taken, so the model starts empty again."""
        with self._lock:
            self._parser.flush()
            keys: list[KeyPress] = []
            if self._queued:
                keys += [*_text_keys("\n".join(self._queued)), ENTER]
            keys += _text_keys(self._draft)
            if self._end_of_input and not self._draft:
                keys.append(KeyPress(Keys.ControlD, "\x04"))
            self._draft, self._queued, self._end_of_input = "", [], False
        self._on_change()
        return keys

    def _key(self, press: KeyPress) -> None:
        key, after_escape = press.key, self._after_escape
        self._after_escape = key == Keys.Escape
        if key == Keys.BracketedPaste:
            self._draft += press.data.replace("\r\n", "\n").replace("\r", "\n")
        elif (key == Keys.ControlM and after_escape) or key in NEWLINE_KEYS:
            self._draft += "\n"
        elif key == Keys.ControlM:
            if self._draft.strip():
                self._queued.append(self._draft)
            self._draft = ""
        elif key in DELETE_KEYS:
            self._draft = self._draft[:-1]
        elif key == Keys.ControlU:
            self._draft = self._draft.rpartition("\n")[0] + ("\n" if "\n" in self._draft else "")
        elif key == Keys.ControlW:
            self._draft = self._draft.rstrip()
            self._draft = self._draft[: max(self._draft.rfind(" "), self._draft.rfind("\n")) + 1]
        elif key == Keys.Up and not self._draft and self._queued:
            self._draft = self._queued.pop()
        elif key == Keys.ControlD:
            self._end_of_input = self._end_of_input or not self._draft
        elif key == Keys.BackTab:
            self._shift_tabs += 1
        elif key == Keys.ControlI:
            self._draft += "\t"
        elif isinstance(key, str) and len(key) == 1 and key.isprintable():
            self._draft += key


def _text_keys(text: str) -> list[KeyPress]:
    return [KeyPress(Keys.ControlJ, "\n") if char == "\n" else KeyPress(char, char) for char in text]
