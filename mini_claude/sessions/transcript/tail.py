"""The end of a transcript, read without reading the whole file: where its last complete line is,
what follows it (a torn line after a crash), and the message count the last record carries."""

from __future__ import annotations

import os
from dataclasses import dataclass

from mini_claude.sessions.transcript.records import (
    HEADER_START,
    HEADER_TYPE,
    RECORD_PREFIX,
    RECORD_TYPES,
    json_object,
)

# Read backwards in growing chunks: most last lines are short, a few hold a large tool output.
FIRST_CHUNK_BYTES = 4 * 1024
MAX_CHUNK_BYTES = 1 * 2**20
# A line after the last newline is parsed (to tell a torn line from a complete one whose newline
# was removed by an editor) only up to this size by default; a larger one is taken as torn.
FRAGMENT_MAX_BYTES = 1 * 2**20
PREFIX_BYTES = 64  # enough for `{"type":"tool_results","n":<any count>,`


@dataclass(frozen=True)
class Tail:
    complete_end: int  # just past the last newline: where a torn line starts (0: no newline at all)
    last_line_start: int | None  # where the last complete line starts (None: no complete line)
    fragment: bytes | None  # the bytes after the last newline, if any and not larger than the max
    fragment_size: int
    fragment_is_record: bool  # the bytes after the last newline are one whole JSON record


def read_tail(
    fd: int, size: int, scan_limit: int | None = None, fragment_max: int = FRAGMENT_MAX_BYTES
) -> Tail:
    """The file's end. With `scan_limit`, at most that many bytes are read looking for the start
    of the last line; if it starts further back, `last_line_start` is None (and `complete_end`
    is only right when a newline was found). Bytes after the last newline are read and parsed
    only up to `fragment_max`; a longer fragment counts as torn."""
    newlines: list[int] = []  # offsets of the last two newlines, last first
    position, chunk_size = size, FIRST_CHUNK_BYTES
    floor = 0 if scan_limit is None else max(0, size - scan_limit)
    while position > floor and len(newlines) < 2:
        start = max(floor, position - chunk_size)
        chunk_size = min(chunk_size * 4, MAX_CHUNK_BYTES)
        chunk = os.pread(fd, position - start, start)
        found = len(chunk)
        while len(newlines) < 2 and (found := chunk.rfind(b"\n", 0, found)) >= 0:
            newlines.append(start + found)
        position = start
    complete_end = newlines[0] + 1 if newlines else 0
    if len(newlines) > 1:
        last_line_start: int | None = newlines[1] + 1
    else:  # the whole file was read back to its start, or the scan limit stopped the search
        last_line_start = 0 if newlines and floor == 0 else None
    fragment_size = size - complete_end
    fragment = None
    if 0 < fragment_size <= fragment_max:
        fragment = os.pread(fd, fragment_size, complete_end)
    return Tail(complete_end, last_line_start, fragment, fragment_size, _is_record(fragment))


def last_record(fd: int, tail: Tail) -> tuple[str, int] | None:
    """The type and `"n"` (message count) of the last whole record, from its first bytes:
    ("session", 0) when only the header is there; None when the line does not start the way the
    writer starts records (a hand-edited file: parse it instead)."""
    if tail.fragment_is_record:
        head = (tail.fragment or b"")[:PREFIX_BYTES]
    elif tail.last_line_start is not None:
        head = os.pread(fd, PREFIX_BYTES, tail.last_line_start)
    else:
        return None
    if head.startswith(HEADER_START):
        return HEADER_TYPE, 0
    match = RECORD_PREFIX.match(head)
    return (match.group(1).decode("ascii"), int(match.group(2))) if match else None


def _is_record(fragment: bytes | None) -> bool:
    record = json_object(fragment) if fragment else None
    return record is not None and record.get("type") in (*RECORD_TYPES, HEADER_TYPE)
