"""Keys pressed while a turn runs (a reply streams, a tool works): kept for the next prompt, and
a lone Esc stops the turn exactly as Ctrl+C does (SIGINT to the main thread).

During a turn prompt-toolkit is not reading the terminal. Echo goes off (typed keys would be
printed into the reply) and so does line mode (else an Esc would only arrive with the next
Enter); Ctrl+C still raises SIGINT; the terminal brackets pastes. A thread reads each byte as it
comes. An Esc is alone when nothing follows it within ESCAPE_WAIT_S: an arrow key or Alt+key
arrives as one burst starting with Esc, and an Esc inside a bracketed paste is text. Everything
else typed goes to the line the user sees under the reply (`live_input/typed_line.py`: messages
queued with Enter, the line being typed), handed to the next prompt when the turn ends: what was
queued is sent after the reply; when the turn was stopped it waits in the prompt, unsent.
Shift+Tab cycles the permission mode, as at the prompt. Around a permission question the thread
stops (what was typed so far stays with the line, never the question's answer), so the question
reads its own keys.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import termios
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

from prompt_toolkit.input import Input
from prompt_toolkit.input.typeahead import store_typeahead

from mini_claude.core.interrupts import sigint_deferred
from mini_claude.ui.live_input.typed_line import TypedLine
from mini_claude.ui.render.live_region import Typed
from mini_claude.ui.repl.typeahead import read_pending

ESC = b"\x1b"
BRACKETED_PASTE_ON, BRACKETED_PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l"
PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"
ESCAPE_WAIT_S = 0.05  # the bytes of one key arrive together; a person's next key takes longer
READ_BYTES = 4096


class TurnKeys:
    """Watches `prompt_input`'s terminal while `watching()`; `paused()` hands it to a question."""

    def __init__(
        self,
        prompt_input: Input,
        on_change: Callable[[], None] = lambda: None,
        on_shift_tab: Callable[[], object] = lambda: None,
    ) -> None:
        self._input = prompt_input
        self._fd: int | None = None  # set while watching
        self._reader: _Reader | None = None
        self.typed = TypedLine(on_change, on_shift_tab)  # what was typed during the turn, shown as typed

    def snapshot(self) -> Typed:
        return self.typed.snapshot()

    @contextmanager
    def watching(self) -> Iterator[None]:
        try:
            fd = self._input.fileno()
            before = termios.tcgetattr(fd)
        except (AttributeError, NotImplementedError, OSError, ValueError, termios.error):
            yield  # not a terminal: nothing to watch, nothing is echoed
            return
        quiet = list(before)
        quiet[0] = before[0] & ~termios.ICRNL  # Enter stays \r, told apart from Ctrl+J's \n
        quiet[3] = before[3] & ~(termios.ECHO | termios.ICANON)  # local modes; ISIG stays on
        quiet[6] = list(before[6])
        quiet[6][termios.VMIN], quiet[6][termios.VTIME] = 1, 0
        with suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, quiet)
        self._fd = fd
        _terminal_says(BRACKETED_PASTE_ON)
        self._start()
        try:
            yield
        finally:
            # An Esc pressed just as the turn ends lands after the terminal is back as it was.
            with sigint_deferred():
                self._stop()
                self._fd = None
                _terminal_says(BRACKETED_PASTE_OFF)
                with suppress(termios.error):
                    termios.tcsetattr(fd, termios.TCSANOW, before)
                keys = self.typed.take_keys()
                if keys:
                    store_typeahead(self._input, keys)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop reading (what was typed so far goes to the next prompt) until the block ends."""
        if self._reader is None:
            yield
            return
        self._stop()
        try:
            yield
        finally:
            self._start()

    def _start(self) -> None:
        assert self._fd is not None
        self._reader = _Reader(self._fd, self.typed)
        self._reader.start()

    def _stop(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.stop()


class _Reader(threading.Thread):
    def __init__(self, fd: int, typed: TypedLine) -> None:
        super().__init__(name="turn-keys", daemon=True)
        self._fd = fd
        self._line = typed
        self._wake_read, self._wake_write = os.pipe()
        self._typed = bytearray()
        self._fed = 0  # bytes of _typed given to the line
        self._lock = threading.Lock()
        self._stopping = False
        self._interrupted = False  # once per turn: a second Esc while it unwinds does nothing

    def run(self) -> None:
        try:
            while self._read_more(None):
                if self._typed.endswith(ESC) and not self._in_paste() and not self._wait_for_more():
                    self._lone_escape()
                self._feed()
        except OSError:
            pass  # the terminal went away: nothing more to read

    def stop(self) -> None:
        """End the thread; what is still pending goes to the line too (an Esc at the very end
        was meant for the turn, not the prompt)."""
        with self._lock:
            self._stopping = True
        os.write(self._wake_write, b"x")
        self.join()
        os.close(self._wake_read)
        os.close(self._wake_write)
        self._typed += read_pending(self._fd)
        while self._typed.endswith(ESC):
            del self._typed[-1:]
        self._feed()

    def _feed(self) -> None:
        """Give the line what was read since, but an Esc at the end: it may begin a key's bytes."""
        end = len(self._typed) - (1 if self._typed.endswith(ESC) else 0)
        if end > self._fed:
            self._line.feed(bytes(self._typed[self._fed : end]))
            self._fed = end

    def _read_more(self, timeout: float | None) -> bool:
        """Wait for input; False when told to stop or the terminal closed."""
        ready = select.select([self._fd, self._wake_read], [], [], timeout)[0]
        if self._wake_read in ready:
            return False
        chunk = os.read(self._fd, READ_BYTES)
        self._typed += chunk
        return bool(chunk)

    def _wait_for_more(self) -> bool:
        """After an Esc: whether more bytes follow at once (then it began a key sequence)."""
        ready = select.select([self._fd, self._wake_read], [], [], ESCAPE_WAIT_S)[0]
        return bool(ready)

    def _in_paste(self) -> bool:
        return self._typed.rfind(PASTE_START) > self._typed.rfind(PASTE_END)

    def _lone_escape(self) -> None:
        while len(self._typed) > self._fed and self._typed.endswith(ESC):
            del self._typed[-1:]
        with self._lock:
            if self._stopping or self._interrupted:
                return
            self._interrupted = True
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


def _terminal_says(sequence: str) -> None:
    """Tell the terminal something (a mode to turn on or off) when the output is one."""
    with suppress(OSError, ValueError):
        if sys.stdout.isatty():
            sys.stdout.write(sequence)
            sys.stdout.flush()
