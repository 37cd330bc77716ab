"""Keys typed before the prompt was ready (at start-up, or while a reply was streaming).

Until prompt-toolkit switches the terminal to raw mode, the terminal is in line mode, which turns
Enter into `\\n` — the key we bind to "insert a newline", so a message typed ahead would sit in
the prompt unsent. Here what was typed ahead is read first and handed to the prompt as one
message whose last line end is Enter, unless more was typed after it (earlier ones stay new
lines: a paste is never split up into several messages). After an interrupt none of it is sent.
"""

from __future__ import annotations

import os
import select
import termios
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress

from prompt_toolkit.input import Input
from prompt_toolkit.input.typeahead import get_typeahead, store_typeahead
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyPress
from prompt_toolkit.keys import Keys

READ_BYTES = 4096
CTRL_D = b"\x04"
MAX_TYPEAHEAD_BYTES = 64 * 1024  # more than anyone types ahead; a huge paste is left to the prompt


def keys_typed_ahead(line_mode: bytes, raw: bytes = b"") -> list[KeyPress]:
    """The key presses in what was read in line mode (whole lines) and then in raw mode (as typed).

    A line end that ends everything read (before a Ctrl+D) is Enter: that message was sent. When
    raw-mode keys follow it, it was a line end inside a paste or message still being typed. A "\n"
    ending the raw read is a line the terminal ended just before raw mode began: Enter as well."""
    text = line_mode.decode("utf-8", errors="surrogateescape")
    after = ""
    if text.endswith(CTRL_D.decode()):
        text, after = text[:-1], CTRL_D.decode()
    if text.endswith("\n") and not raw:
        text = text[:-1] + "\r"
    # Enter pressed between the line-mode read and the switch to raw mode: the terminal had already
    # ended the line as "\n" (raw mode itself sends "\r"). Ending everything read, it is Enter too.
    if raw.endswith(b"\n"):
        raw = raw[:-1] + b"\r"
    keys: list[KeyPress] = []
    parser = Vt100Parser(keys.append)
    parser.feed(text + after + raw.decode("utf-8", errors="surrogateescape"))
    parser.flush()
    return keys


def read_pending(fd: int) -> bytes:
    """What is waiting on `fd` right now, without blocking (in line mode: whole lines only).

    Line mode turns Ctrl+D on an empty line into an end-of-file read; it comes back as Ctrl+D."""
    chunks: list[bytes] = []
    total = 0
    try:
        while total < MAX_TYPEAHEAD_BYTES and select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, READ_BYTES)
            if not chunk:
                chunks.append(CTRL_D)
                break
            chunks.append(chunk)
            total += len(chunk)
    except (OSError, ValueError):
        pass  # no usable stdin: there is nothing typed ahead
    return b"".join(chunks)


def read_typeahead(prompt_input: Input, stay_raw: ExitStack | None = None) -> list[KeyPress]:
    """Keys typed on `prompt_input`'s terminal that nothing has read yet (call it in line mode).
    With `stay_raw`, the terminal is left in raw mode until that stack closes."""
    try:
        fd = prompt_input.fileno()
    except (AttributeError, NotImplementedError, OSError, ValueError):
        return []
    line_mode = read_pending(fd)
    raw = b""
    if not line_mode.endswith(CTRL_D):
        # Line mode hides a line not ended yet (the end of a paste, a message half typed).
        with ExitStack() as own:
            (stay_raw if stay_raw is not None else own).enter_context(prompt_input.raw_mode())
            raw = read_pending(fd)
    return keys_typed_ahead(line_mode, raw) if line_mode or raw else []


@contextmanager
def typeahead_passed_to_prompt(prompt_input: Input) -> Iterator[None]:
    """Around a prompt: what was typed ahead on `prompt_input`'s terminal is queued for it to read
    first, and the terminal stays in raw mode from that read until the prompt's own raw mode. In
    line mode in between, a line typed just then would end as "\n" (a new line in the message, not
    Enter) and sit in the prompt unsent; in raw mode its Enter stays Enter for the prompt to read."""
    with ExitStack() as stay_raw:
        keys = read_typeahead(prompt_input, stay_raw)
        if keys:
            store_typeahead(prompt_input, keys)
        yield


def typeahead_unsent(prompt_input: Input) -> None:
    """After an interrupt: a message typed and sent with Enter while the turn ran goes back to the
    prompt as text to edit, not sent (stopping means stop, as in Claude Code). An Enter inside it
    becomes a line break; the ones that end it go."""
    keys = get_typeahead(prompt_input)
    while keys and keys[-1].key in (Keys.ControlM, Keys.ControlJ):
        keys.pop()
    kept = [KeyPress(Keys.ControlJ, "\n") if key.key == Keys.ControlM else key for key in keys]
    if kept:
        store_typeahead(prompt_input, kept)


@contextmanager
def typeahead_set_aside(prompt_input: Input) -> Iterator[None]:
    """Around a question (a permission, a confirmation): what was typed before it is a message for
    the next prompt, not the answer; it is given back, ahead of anything typed after the answer."""
    saved = get_typeahead(prompt_input) + read_typeahead(prompt_input)
    try:
        yield
    finally:
        after = get_typeahead(prompt_input)
        if saved or after:
            store_typeahead(prompt_input, saved + after)


@contextmanager
def typing_not_echoed(prompt_input: Input) -> Iterator[None]:
    """While a reply streams, keys typed ahead are not echoed into it: they would be printed in the
    middle of the reply (and stay there in the scrollback). They show up in the next prompt."""
    try:
        fd = prompt_input.fileno()
        before = termios.tcgetattr(fd)
    except (AttributeError, NotImplementedError, OSError, ValueError, termios.error):
        yield  # not a terminal: nothing is echoed anyway
        return
    quiet = list(before)
    quiet[3] = before[3] & ~termios.ECHO  # local modes; line editing and Ctrl+C stay as they are
    with suppress(termios.error):
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        with suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, before)
