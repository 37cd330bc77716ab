"""What a file is before a tool reads it: text or binary, a regular file or something that would
hang or never end (a FIFO, a device).

Apart from files.py because every tool that reads files asks these questions: read_file and
edit_file, grep_search (binary files are skipped) and the walk (special files are named).
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import BinaryIO

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.files import safe_read
from mini_claude.core.files.text_decoding import SNIFF_BYTES, DecodedText, decode_text

__all__ = ["SNIFF_BYTES", "looks_binary", "open_regular", "sniff", "wide_text_as_utf8"]

MAX_WIDE_TEXT_BYTES = 16 * 1024 * 1024  # a UTF-16 or UTF-32 file is decoded whole: at most this


def sniff(head: bytes) -> DecodedText:
    """What the first SNIFF_BYTES of a file say it is (`text_decoding.decode_text`): binary (no
    text), UTF-8, or UTF-16/32 (a BOM, or the zero bytes of BOM-less UTF-16)."""
    return decode_text(head[:SNIFF_BYTES], complete=len(head) < SNIFF_BYTES)


def looks_binary(head: bytes) -> bool:
    """Not UTF-8 text: binary, or text in UTF-16/32, which grep_search and edit_file do not take
    as lines of bytes (read_file decodes the latter whole: `wide_text_as_utf8`)."""
    return sniff(head).encoding != "UTF-8"


def wide_text_as_utf8(handle: BinaryIO, encoding: str, shown: str) -> tuple[BinaryIO, str | None]:
    """The UTF-16 or UTF-32 file open as `handle`, decoded whole and given back as UTF-8 bytes
    to read as any file, with the decoder's warning (U+FFFD put in, no BOM). A file too large to
    decode whole is a clear error."""
    handle.seek(0)
    data = handle.read(MAX_WIDE_TEXT_BYTES + 1)
    if len(data) > MAX_WIDE_TEXT_BYTES:
        raise ToolError(
            prompts.notice(
                "file_wide_too_large", path=shown, encoding=encoding, limit_mb=MAX_WIDE_TEXT_BYTES // 2**20
            )
        )
    decoded = decode_text(data)
    return io.BytesIO((decoded.text or "").encode("utf-8", "surrogatepass")), decoded.warning


def open_regular(path: Path, shown: str) -> BinaryIO:
    """Open a regular file for reading; anything else (folder, FIFO, device) is a clear error.

    `stat` comes first and the open is non-blocking, so a FIFO can never hang us.
    """
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(prompts.notice("file_is_directory", path=shown))
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(prompts.notice("file_not_regular", path=shown, kind=safe_read.kind(info.st_mode)))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(prompts.notice("file_not_found", path=shown)) from None
    except OSError as error:
        raise ToolError(prompts.notice("file_unreadable", path=shown, error=error.strerror)) from None
    opened_mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(opened_mode):  # replaced between stat and open
        os.close(fd)
        raise ToolError(prompts.notice("file_not_regular", path=shown, kind=safe_read.kind(opened_mode)))
    return os.fdopen(fd, "rb")
