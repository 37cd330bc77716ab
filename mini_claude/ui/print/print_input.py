"""Print mode's message: the prompt from the command line, with piped stdin before it.

`cat notes.txt | mini-claude -p "summarize this"` sends the file's text, a blank line, then the
prompt, as Claude Code does; stdin alone is the whole message. Stdin is read only when it is not
a terminal, as bytes, and never more than STDIN_MAX_BYTES of it (a bigger input is refused whole
rather than cut: half a log summarised as if it were all of it would mislead). Bytes that are not
UTF-8 become U+FFFD, with a warning; NUL bytes mean binary data, which is refused.
"""

from __future__ import annotations

import os
import select
from dataclasses import dataclass, field
from typing import IO

from mini_claude.core.files.safe_read import format_size

STDIN_MAX_BYTES = 5_000_000  # some 1.2 million tokens: more than any model's context holds
STDIN_WAIT_SECONDS = 3.0  # with a prompt given: how long a silent, open stdin is waited for
READ_CHUNK_BYTES = 1 << 16
BOM = "\ufeff"


class InputError(Exception):
    """The message cannot be made; the text says why and what to do, in one line."""


@dataclass
class PrintInput:
    message: str
    warnings: list[str] = field(default_factory=list)


def gather_message(
    prompt: str | None, stdin: IO[bytes] | None, *, wait: float = STDIN_WAIT_SECONDS
) -> PrintInput:
    """The message to send, from `prompt` (the command line's words) and `stdin` (binary)."""
    prompt = prompt if prompt and prompt.strip() else None
    warnings: list[str] = []
    piped = _read_stdin(stdin, wait if prompt else None, warnings)
    if piped is not None and piped.strip():
        message = piped if prompt is None else f"{piped.rstrip()}\n\n{prompt}"
        return PrintInput(message, warnings)
    if prompt is None:
        raise InputError('no prompt: pass one (mini-claude -p "…") or pipe it on stdin')
    return PrintInput(prompt, warnings)


def _read_stdin(stdin: IO[bytes] | None, wait: float | None, warnings: list[str]) -> str | None:
    """Stdin's text, or None when it is a terminal, closed, or (with `wait`) silent that long."""
    try:
        if stdin is None or stdin.isatty():
            return None
        fd = stdin.fileno()
    except (OSError, ValueError):  # closed (`<&-`), or no descriptor at all
        return None
    if wait is not None and not select.select([fd], [], [], wait)[0]:
        warnings.append(
            f"nothing arrived on stdin in {wait:g} s: answering the prompt alone "
            "(redirect stdin from /dev/null to skip this wait)"
        )
        return None
    data = _read_bounded(fd)
    if b"\0" in data:
        raise InputError(
            "stdin holds binary data (NUL bytes): pipe text, "
            "or name the file in the prompt for the model to inspect"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        warnings.append("stdin is not valid UTF-8: the bytes that are not were replaced by U+FFFD (�)")
    return text.removeprefix(BOM)


def _read_bounded(fd: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while chunk := os.read(fd, READ_CHUNK_BYTES):
        total += len(chunk)
        if total > STDIN_MAX_BYTES:
            raise InputError(
                f"stdin holds more than {format_size(STDIN_MAX_BYTES)}, more than a model can read: "
                "pipe a part of it (e.g. `tail -c 1000000 big.log |`), or name the file in the prompt"
            )
        chunks.append(chunk)
    return b"".join(chunks)
