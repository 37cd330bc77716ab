"""What a file is before a tool reads it: text or binary, a regular file or something that would
hang or never end (a FIFO, a device).

Apart from files.py because every tool that reads files asks these questions: read_file and
edit_file, grep_search (binary files are skipped) and the walk (special files are named).
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path
from typing import BinaryIO

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError

SNIFF_BYTES = 8 * 1024  # how much of a file decides "binary or text"
MAX_UNDECODABLE_RATIO = 0.3  # above this share of invalid UTF-8 in the sniffed bytes: binary

_FILE_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def looks_binary(head: bytes) -> bool:
    """NUL bytes, or mostly invalid UTF-8, in the first bytes of a file mean it is not text."""
    if b"\0" in head:
        return True
    if not head:
        return False
    # A multi-byte character may be cut at the end of the sample: do not count it.
    decoded = head.decode("utf-8", "replace") if len(head) < SNIFF_BYTES else _decode_prefix(head)
    return decoded.count("\ufffd") > MAX_UNDECODABLE_RATIO * len(head)


def file_kind(mode: int) -> str:
    """What a non-regular file is, for the `file_not_regular` notice: "a named pipe (FIFO)"…"""
    return _FILE_KINDS.get(stat.S_IFMT(mode), "a special file")


def _decode_prefix(head: bytes) -> str:
    return codecs.getincrementaldecoder("utf-8")("replace").decode(head, final=False)


def open_regular(path: Path, shown: str) -> BinaryIO:
    """Open a regular file for reading; anything else (folder, FIFO, device) is a clear error.

    `stat` comes first and the open is non-blocking, so a FIFO can never hang us.
    """
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(prompts.notice("file_is_directory", path=shown))
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(prompts.notice("file_not_regular", path=shown, kind=file_kind(info.st_mode)))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(prompts.notice("file_not_found", path=shown)) from None
    except OSError as error:
        raise ToolError(prompts.notice("file_unreadable", path=shown, error=error.strerror)) from None
    opened_mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(opened_mode):  # replaced between stat and open
        os.close(fd)
        raise ToolError(prompts.notice("file_not_regular", path=shown, kind=file_kind(opened_mode)))
    return os.fdopen(fd, "rb")
