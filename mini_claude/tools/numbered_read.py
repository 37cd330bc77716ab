"""read_file's reading: lines `first`.. of a file as `cat -n` text, streamed, within limits that
hold however the file is made. A huge file is never loaded whole, and one call reads at most
MAX_SCAN_BYTES of it in all: to reach its offset and past the rest of lines too long to show.
A 40 GB file whose first line never ends (sparse, or /var/log with no line breaks) costs one
bounded read and a clear message, not a read to its end.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import BinaryIO, Literal

from mini_claude.core import prompts

MAX_LINES = 2_000  # per read_file call
MAX_READ_BYTES = 256 * 1024  # of numbered output per read_file call
MAX_LINE_CHARS = 2_000  # longer lines are cut, with a marker
LINE_READ_BYTES = MAX_LINE_CHARS * 4  # enough bytes for MAX_LINE_CHARS characters of UTF-8
MAX_SCAN_BYTES = 128 * 1024 * 1024  # read by one call in all, to reach its offset and past cut lines
SCAN_CHUNK_BYTES = 1024 * 1024  # lines before the offset are counted a chunk at a time
LINE_NUMBER_WIDTH = 6  # as `cat -n`

# Why the reading stopped: the line limit, the output limit, the scan limit, or the end of file.
Stop = Literal["lines", "bytes", "scan"] | None


@dataclass
class NumberedLines:
    lines: list[str]  # `cat -n` text, each with its line break
    last_seen: int  # the number of the last line read (in part, for the scan limit)
    stop: Stop
    whole_lines: int = 0  # when the scan limit stopped it: how many lines ended within it
    undecodable_lines: int = 0  # of the lines shown, those holding bytes that are not UTF-8


def read_numbered(handle: BinaryIO, first: int, count: int) -> NumberedLines:
    """Lines `first`.. (at most `count` of them) of the file open as `handle`."""
    scan = _Scan(handle)
    skipped, partial = scan.skip_lines(first - 1)
    if skipped < first - 1:  # the end of the file, or the scan limit, came first
        last = skipped + partial
        return NumberedLines([], last, "scan" if scan.left == 0 else None, whole_lines=skipped)
    out: list[str] = []
    used = undecodable = 0
    number = first - 1
    while scan.left and (raw := scan.readline(LINE_READ_BYTES)):
        number += 1
        if len(out) == count:
            return NumberedLines(out, number, "lines", undecodable_lines=undecodable)
        cut_bytes, line_ends = 0, raw.endswith(b"\n") or scan.left > 0  # else: at the scan limit
        if len(raw) == LINE_READ_BYTES and not raw.endswith(b"\n"):
            cut_bytes, line_ends = scan.skip_rest_of_line()
        text = raw.decode("utf-8", "replace")
        undecodable += not _is_utf8(raw, whole=not cut_bytes)
        text = text[:-1] if text.endswith("\n") else text
        text = text[:-1] if text.endswith("\r") else text
        if len(text) > MAX_LINE_CHARS:
            cut_bytes += len(text[MAX_LINE_CHARS:].encode())
            text = text[:MAX_LINE_CHARS]
        if not line_ends:
            text += " " + prompts.notice("read_line_past_scan_limit", limit_mb=MAX_SCAN_BYTES // 2**20)
        elif cut_bytes:
            text += " " + prompts.notice("read_line_truncated", bytes=cut_bytes)
        rendered = f"{number:>{LINE_NUMBER_WIDTH}}\t{text}\n"
        size = len(rendered.encode())
        if out and used + size > MAX_READ_BYTES:
            return NumberedLines(out, number, "bytes", undecodable_lines=undecodable)
        out.append(rendered)
        used += size
        if not line_ends:
            return NumberedLines(out, number, "scan", number - 1, undecodable)
    if not scan.left and scan.more_to_read():
        return NumberedLines(out, number, "scan", number, undecodable)
    return NumberedLines(out, number, None, undecodable_lines=undecodable)


def _is_utf8(raw: bytes, *, whole: bool) -> bool:
    """Whether `raw` is UTF-8 (when not `whole`, a character cut at its end is no fault)."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(raw, final=whole)
    except UnicodeDecodeError:
        return False
    return True


class _Scan:
    """The file, read through one budget of MAX_SCAN_BYTES."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.left = MAX_SCAN_BYTES

    def more_to_read(self) -> bool:
        return bool(self.handle.read(1))

    def readline(self, limit: int) -> bytes:
        line = self.handle.readline(min(limit, self.left))
        self.left -= len(line)
        return line

    def skip_lines(self, wanted: int) -> tuple[int, int]:
        """Past `wanted` line breaks, counted a chunk at a time. Returns how many it passed, and
        1 if bytes of one more line follow the last of them (0 if not)."""
        passed, partial = 0, 0
        while passed < wanted and self.left:
            chunk = self.handle.read(min(SCAN_CHUNK_BYTES, self.left))
            if not chunk:
                break
            self.left -= len(chunk)
            breaks = chunk.count(b"\n")
            if passed + breaks >= wanted:
                end = -1
                for _ in range(wanted - passed):
                    end = chunk.index(b"\n", end + 1)
                self.handle.seek(end + 1 - len(chunk), 1)  # back to just after that line break
                self.left += len(chunk) - end - 1
                return wanted, 0
            passed += breaks
            partial = int(not chunk.endswith(b"\n"))
        return passed, partial

    def skip_rest_of_line(self) -> tuple[int, bool]:
        """Past the rest of a line too long to show: the bytes skipped, and whether its end was
        reached within the budget."""
        skipped = 0
        while self.left and (chunk := self.readline(SCAN_CHUNK_BYTES)):
            if chunk.endswith(b"\n"):
                return skipped + len(chunk) - 1, True
            skipped += len(chunk)
        return skipped, self.left > 0  # at the end of the file, the line has ended too
