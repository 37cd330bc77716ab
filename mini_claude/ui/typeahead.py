"""Keys typed before the prompt was ready (at start-up, or while a reply was streaming).

Until prompt-toolkit switches the terminal to raw mode, the terminal is in line mode, which turns
Enter into `\\n` — the key we bind to "insert a newline", so a message typed ahead would sit in
the prompt unsent. Here what was typed ahead is read first and handed to the prompt as one
message whose last line end is Enter (earlier ones stay new lines: a paste is never split up
into several messages).
"""

from __future__ import annotations

import os
import select

from prompt_toolkit.input import Input
from prompt_toolkit.input.typeahead import store_typeahead
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyPress

READ_BYTES = 4096
CTRL_D = b"\x04"
MAX_TYPEAHEAD_BYTES = 64 * 1024  # more than anyone types ahead; a huge paste is left to the prompt


def keys_typed_in_line_mode(data: bytes) -> list[KeyPress]:
    """The key presses in `data`; a line end at the very end (before a Ctrl+D) is Enter."""
    text = data.decode("utf-8", errors="surrogateescape")
    after = ""
    if text.endswith(CTRL_D.decode()):
        text, after = text[:-1], CTRL_D.decode()
    if text.endswith("\n"):
        text = text[:-1] + "\r"
    keys: list[KeyPress] = []
    parser = Vt100Parser(keys.append)
    parser.feed(text + after)
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


def pass_typeahead_to_prompt(prompt_input: Input) -> None:
    """Queue what was typed ahead on `prompt_input`'s terminal for the next prompt to read first."""
    try:
        fd = prompt_input.fileno()
    except (AttributeError, NotImplementedError, OSError, ValueError):
        return
    data = read_pending(fd)
    if data:
        store_typeahead(prompt_input, keys_typed_in_line_mode(data))
