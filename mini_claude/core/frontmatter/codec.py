r"""Read and write the `---` frontmatter block at the top of memory, skill, command and rule files.

The format is a small, well-defined subset of YAML: one `key: value` per line, values plain or
quoted. `parse` never raises on str or bytes; every problem becomes a warning instead.

    ---
    name: prefers terse answers
    description: "user wants short replies: no preamble"
    type: feedback
    ---
    Body markdown…

Rules the parser follows:
- Bytes are decoded as every file is (`core/files/text_decoding.py`), by their byte order mark alone: a
  BOM is honoured (UTF-8, UTF-16, UTF-32), else bytes that are not UTF-8 become U+FFFD and a
  warning. Then blank lines may precede the opening `---` line.
- Lines end with `\n`, `\r\n` or a lone `\r`. A fence is a line holding only `---`
  (spaces and tabs around it are ignored).
- Inside the block: blank lines and `#` comment lines are skipped; other lines are split at their
  first `:`; keys are `[A-Za-z0-9_-]+`, lowercased. The first of duplicate keys wins. A line
  indented below a key goes on with its value, and `- item` lines after an empty value make a
  list (YAML's block forms, as skill and command files use them: core/frontmatter/fields.py).
- A value is plain (surrounding whitespace stripped), `'single'` (`''` stands for `'`) or
  `"double"`: a JSON string, where YAML's `\xHH` and `\UHHHHHHHH` escapes are accepted too.
- Every value is passed through `fold_value`, so no parsed value contains a line break.
- The body is the text after the closing fence's line end, verbatim.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from mini_claude.core.files.text_decoding import MARK_MAX_BYTES, decode_text
from mini_claude.core.frontmatter.block import BOM, BOM_BYTES, Block, locate_block
from mini_claude.core.frontmatter.fields import fold_value as fold_value  # where other modules find it
from mini_claude.core.frontmatter.fields import parse_fields
from mini_claude.core.frontmatter.scalars import format_value

FENCE = "---"
MAX_HEADER_BYTES = 16 * 1024  # read_header gives up (with a warning) if the block is not closed by then
READ_CHUNK_BYTES = 2048  # one read holds a typical memory header (~200-500 bytes) whole
WIDE_CHARACTER_BYTES = 4  # UTF-32 takes 4 bytes a character: a header in it may be this much longer
MAX_WARNINGS = 20  # a garbage file must not flood the log; the rest are summarised in one line

_KEY = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Frontmatter:
    """What `parse` or `read_header` found.

    `has_block` is False when there was no valid block (none at all, never closed, or unreadable);
    `fields` is then empty. Warnings describe what was skipped or repaired; they do not name the file
    (the caller knows it).
    """

    fields: dict[str, str] = field(default_factory=dict)
    body: str = ""
    warnings: tuple[str, ...] = ()
    has_block: bool = False
    lists: dict[str, tuple[str, ...]] = field(default_factory=dict)  # block lists' items (fields.py)


def parse(text: str | bytes) -> Frontmatter:
    """Split `text` into frontmatter fields and body. Never raises for str or bytes input.

    Bytes are decoded as UTF-8; undecodable bytes become U+FFFD and a warning. Without a block the
    whole text (minus a BOM) is the body; an opened but unclosed block is treated the same, with a
    warning.
    """
    warnings: list[str] = []
    if isinstance(text, bytes | bytearray | memoryview):
        text = _decode(bytes(text), warnings)
    text = text.removeprefix(BOM)

    block = locate_block(text, at_eof=True)
    if block.status == "unclosed":
        warnings.append(_unclosed_warning(block.open_line))
    if block.status != "closed":
        return Frontmatter({}, text, _capped(warnings), has_block=False)

    fields, lists = parse_fields(text, block, warnings)
    return Frontmatter(fields, text[block.block_end :], _capped(warnings), has_block=True, lists=lists)


def format(fields: Mapping[str, str], body: str) -> str:
    """Return the canonical file text: a `---` block with one `key: value` line per field, then `body`
    verbatim. `parse` reads it back as `{key.lower(): fold_value(value)}` and `body`, exactly.

    Raises ValueError for a key that is not `[A-Za-z0-9_-]+` or that repeats another key ignoring
    case: a programming error, not data.
    """
    lines = [FENCE]
    seen: set[str] = set()
    for key, value in fields.items():
        if not _KEY.fullmatch(key):
            raise ValueError(f"frontmatter key {key!r} must match [A-Za-z0-9_-]+")
        canonical = key.lower()
        if canonical in seen:
            raise ValueError(f"frontmatter key {key!r} repeats another key (keys are case-insensitive)")
        seen.add(canonical)
        lines.append(f"{canonical}: {format_value(fold_value(value))}")
    lines.append(FENCE)
    return "\n".join(lines) + "\n" + body


def read_header(path: str | os.PathLike[str], max_bytes: int = MAX_HEADER_BYTES) -> Frontmatter:
    """Read only the frontmatter of the file at `path`; the returned `body` is always "".

    Reads in `READ_CHUNK_BYTES` chunks until the closing fence, so a typical memory file costs one
    open and one read. A block not closed within `max_bytes` is treated as broken (warning, no
    fields). IO errors (missing, unreadable, a directory) become a warning, never an exception.
    Fields and `has_block` agree with `parse` on the whole file whenever the block fits in `max_bytes`.
    """
    try:
        # O_NONBLOCK: a FIFO or device posing as a memory file must not hang recall; no effect on files.
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        return Frontmatter(warnings=(_io_warning(exc),))
    try:
        data = b""
        at_eof = False
        while True:
            want = max_bytes - len(data)
            if want <= 0:
                return Frontmatter(warnings=(_cap_warning(max_bytes),))
            chunk = os.read(fd, min(READ_CHUNK_BYTES, want))
            at_eof = not chunk
            data += chunk
            if len(data) < MARK_MAX_BYTES and not at_eof:
                continue  # a byte order mark is told whole
            if _wide(data):
                return _wide_header(fd, data, max_bytes)
            block = locate_block(data, at_eof)
            if block.status != "more":
                break
    except OSError as exc:  # e.g. EISDIR: opening a directory read-only succeeds, reading it fails
        return Frontmatter(warnings=(_io_warning(exc),))
    finally:
        with contextlib.suppress(OSError):  # nothing useful to do if closing a read-only fd fails
            os.close(fd)

    if block.status == "closed":
        warnings: list[str] = []
        text = _decode(data[: block.block_end], warnings)
        # The same block in the decoded text, not searched for again: the fences, the blank lines
        # before the first and the BOM are ASCII or dropped, so only the inner offsets shift.
        bom = len(BOM_BYTES) if data.startswith(BOM_BYTES) else 0
        inner_end = len(text) - (block.block_end - block.inner_end)
        in_text = Block("closed", block.open_line, block.inner_start - bom, inner_end, len(text))
        fields, lists = parse_fields(text, in_text, warnings)  # as `parse` does: the same fields
        return Frontmatter(fields, "", _capped(warnings), has_block=True, lists=lists)
    if block.status == "unclosed":
        return Frontmatter(warnings=(_unclosed_warning(block.open_line),))
    return Frontmatter()


# --- small helpers -----------------------------------------------------------------------------------


def _decode(data: bytes, warnings: list[str]) -> str:
    """As every file is read (`text_decoding.decode_text`), by its byte order mark alone (as
    `read_header`, which sees only the first bytes, can tell); a warning says how."""
    decoded = decode_text(data, guess=False)
    if decoded.warning is not None:
        warnings.append(decoded.warning)
    return decoded.text or ""


def _wide(first_bytes: bytes) -> bool:
    """Whether a file starting so is UTF-16 or UTF-32 by its byte order mark: its fences are no
    ASCII bytes to be found."""
    return first_bytes.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE))


def _wide_header(fd: int, data: bytes, max_bytes: int) -> Frontmatter:
    """The header of a file in UTF-16 or UTF-32: read (up to WIDE_CHARACTER_BYTES × `max_bytes`),
    decoded, then found as `parse` finds it."""
    limit = max_bytes * WIDE_CHARACTER_BYTES
    while len(data) < limit and (chunk := os.read(fd, min(limit - len(data), 64 * READ_CHUNK_BYTES))):
        data += chunk
    at_eof = len(data) < limit or not os.read(fd, 1)
    decoded = decode_text(data, complete=at_eof, guess=False)
    parsed = parse(decoded.text or "")
    if not parsed.has_block and not at_eof:
        return Frontmatter(warnings=(_cap_warning(limit),))
    warnings = [*parsed.warnings, *([decoded.warning] if decoded.warning else [])]
    return Frontmatter(parsed.fields, "", _capped(warnings), has_block=parsed.has_block, lists=parsed.lists)


def _capped(warnings: list[str]) -> tuple[str, ...]:
    if len(warnings) <= MAX_WARNINGS:
        return tuple(warnings)
    hidden = len(warnings) - (MAX_WARNINGS - 1)
    return (*warnings[: MAX_WARNINGS - 1], f"... and {hidden} more frontmatter problems")


def _unclosed_warning(open_line: int) -> str:
    return (
        f"line {open_line}: frontmatter opened with --- but never closed; the whole file is treated "
        "as body (add a line containing only --- after the last `key: value` line)"
    )


def _cap_warning(max_bytes: int) -> str:
    return (
        f"frontmatter not closed within the first {max_bytes} bytes; ignored (close it with a --- line "
        "and keep the header short)"
    )


def _io_warning(exc: Exception) -> str:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"cannot read the file: {reason}"
