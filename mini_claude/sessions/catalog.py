"""This project's saved sessions, newest first, each summarised from the start and the end of its
file only (header, first message, the message count carried by the last record): listing stays
fast with hundreds of sessions and transcripts of many megabytes."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from mini_claude.sessions.checkpoints.side_files import SIDE_SUFFIX, read_name
from mini_claude.sessions.transcript.records import (
    HEADER_TYPE,
    MAX_TRANSCRIPT_BYTES,
    PRINT_MODE_KEY,
    TRANSCRIPT_SUFFIX,
    is_transcript_name,
    json_object,
    text_or_empty,
    too_large_problem,
)
from mini_claude.sessions.transcript.sessions_folder import (
    SessionsFolderError,
    TranscriptError,
    open_sessions_dir,
    open_transcript_for_reading,
)
from mini_claude.sessions.transcript.tail import last_record, read_tail
from mini_claude.sessions.typed_input import (
    PART_SEPARATOR,
    SHELL_KEY,
    added_context,
    shell_command,
    typed_preview,
)

PRINT_MODE_MARK = "-p"  # before the first message of a session of print mode, in lists
HEAD_BYTES = 16 * 1024  # the header and, usually, the whole first message
HEADER_MAX_BYTES = 1 * 2**20  # a header longer than the head is read up to this size
FIRST_USER_LINE = b'{"type":"user",'
TEXT_KEY = b'"text":"'
PREVIEW_BYTES = 2048  # of a first message too long for the head, enough for a one-line preview
# A first record longer than the head (attachments, a command's output): its end is looked for this
# far on, in chunks, and the text the user typed, its last block, in its last bytes.
FIRST_LINE_MAX_BYTES = 16 * 2**20
LINE_END_CHUNK_BYTES = 1 * 2**20
TYPED_TAIL_BYTES = 64 * 1024
LOOKAHEAD_LINES = 8  # records looked at for the first user message (a settings record may precede it)
# At most this much of a file is read to count its messages (a last line longer than this is rare).
COUNT_SCAN_MAX_BYTES = 16 * 2**20
_STRING_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class SessionSummary:
    id: str
    path: Path
    last_used: float  # the file's modification time: when a record was last added
    size: int
    started: str = ""  # ISO 8601 from the header
    project: str = ""  # the project root recorded in the header
    message_count: int | None = 0  # None: not known without reading the whole file
    first_message: str = ""  # untrusted text: make it visible (untrusted.visible_text) before showing it
    problem: str | None = None  # why the session cannot be resumed (one line), if it cannot
    copied_from: str = ""  # the session this one is a copy of ("" when it is none)
    copied_messages: int = 0  # how many messages the copy was made with
    print_mode: bool = False  # a session of `-p` (a script's, most likely)
    name: str = ""  # given with /rename (untrusted text, as first_message)

    @property
    def title(self) -> str:
        """What lists show of it: its name, a mark for print mode, its first message (untrusted text)."""
        parts = [self.name, PRINT_MODE_MARK if self.print_mode else "", self.first_message]
        return PART_SEPARATOR.join(part for part in parts if part)


def list_sessions(sessions_dir: Path) -> list[SessionSummary]:
    """Every transcript in `sessions_dir`, newest first; [] when there is no such folder.
    Raises SessionsFolderError when the folder cannot be used (see folder.open_sessions_dir)."""
    return list(_summaries(sessions_dir))


def most_recent_session(sessions_dir: Path, *, exclude: str | None = None) -> SessionSummary | None:
    """The newest session that can be resumed (skipping `exclude`, the one in use), or None."""
    for summary in _summaries(sessions_dir, exclude=exclude):
        if summary.problem is None:
            return summary
    return None


def transcript_entries(dir_fd: int) -> list[tuple[str, os.stat_result]]:
    """(name, lstat) of every `<id>.jsonl` in the folder, newest first (symlinks not followed)."""
    entries = []
    with os.scandir(dir_fd) as scan:
        for entry in scan:
            if is_transcript_name(entry.name):
                try:
                    entries.append((entry.name, entry.stat(follow_symlinks=False)))
                except OSError:
                    continue  # removed meanwhile
    entries.sort(key=lambda item: (-item[1].st_mtime, item[0]))
    return entries


def summarize(sessions_dir: Path, dir_fd: int, name: str, info: os.stat_result) -> SessionSummary:
    session_id = name.removesuffix(TRANSCRIPT_SUFFIX)
    path = sessions_dir / name
    base = SessionSummary(session_id, path, info.st_mtime, info.st_size)
    if not stat.S_ISREG(info.st_mode):
        kind = "a symlink" if stat.S_ISLNK(info.st_mode) else "not a regular file"
        return replace(base, problem=f"{name} is {kind}: not read")
    try:
        fd, opened = open_transcript_for_reading(path, dir_fd=dir_fd)
    except TranscriptError as error:
        return replace(base, problem=str(error))
    try:
        summary = _read_summary(base, fd, opened.st_size)
    except OSError as error:
        return replace(base, problem=f"cannot read {name}: {error.strerror}")
    finally:
        os.close(fd)
    if summary.problem is None and os.path.lexists(sessions_dir / (session_id + SIDE_SUFFIX)):
        summary = replace(summary, name=read_name(sessions_dir, session_id))
    return summary


def _summaries(sessions_dir: Path, *, exclude: str | None = None) -> Iterator[SessionSummary]:
    dir_fd = open_sessions_dir(sessions_dir, create=False)
    if dir_fd is None:
        return
    try:
        for name, info in transcript_entries(dir_fd):
            if info.st_size == 0 and stat.S_ISREG(info.st_mode):
                continue  # created by a session stopped before its first record: nothing to show
            if name.removesuffix(TRANSCRIPT_SUFFIX) != exclude:
                yield summarize(sessions_dir, dir_fd, name, info)
    except OSError as error:
        raise SessionsFolderError(f"cannot list {sessions_dir}: {error.strerror}") from None
    finally:
        os.close(dir_fd)


def _read_summary(base: SessionSummary, fd: int, size: int) -> SessionSummary:
    head = os.pread(fd, HEAD_BYTES, 0)
    header_end = head.find(b"\n")
    if header_end < 0 and len(head) == HEAD_BYTES:
        head = os.pread(fd, HEADER_MAX_BYTES, 0)
        header_end = head.find(b"\n")
    header = json_object(head[: header_end if header_end >= 0 else len(head)])
    if header is None or header.get("type") != HEADER_TYPE:
        # A damaged header costs only what it held (the loader reports it): records from line 1.
        header, records_start = {}, 0
    else:
        records_start = header_end + 1 if header_end >= 0 else len(head)
    summary = SessionSummary(
        base.id, base.path, base.last_used, base.size,
        started=text_or_empty(header.get("started")), project=text_or_empty(header.get("project")),
        first_message=_first_message(fd, head, records_start),
        copied_from=text_or_empty(header.get("copied_from")),
        copied_messages=_count(header.get("copied_messages")),
        print_mode=header.get(PRINT_MODE_KEY) is True,
    )  # fmt: skip
    if size > MAX_TRANSCRIPT_BYTES:
        return replace(summary, problem=too_large_problem(base.path.name, size))
    try:
        return replace(summary, message_count=_message_count(base.path, fd, size))
    except TranscriptError as error:
        return replace(base, problem=str(error))


def _message_count(path: Path, fd: int, size: int) -> int | None:
    """From the last record's first bytes; by loading the file when it was edited by hand (and
    is small enough to load on the way); else unknown. Raises TranscriptError when loading it
    shows it is no transcript."""
    record = last_record(fd, read_tail(fd, size, scan_limit=COUNT_SCAN_MAX_BYTES))
    if record is not None:
        return record[1]
    if size > COUNT_SCAN_MAX_BYTES:
        return None
    from mini_claude.sessions.loading.loader import load_transcript  # rarely needed: not on the common path

    return len(load_transcript(path, shown=path.name).messages)


def _first_message(fd: int, head: bytes, start: int) -> str:
    """What the user typed first (typed_input.py), from the records at `start` in the head of the
    file (which may cut the first message short: its end is then read from the file)."""
    lines = head[start:].split(b"\n")
    offset = start
    for line in lines[:LOOKAHEAD_LINES]:
        if line.startswith(FIRST_USER_LINE):
            record = json_object(line)
            if record is not None:
                return typed_preview(record.get("content"))
            if offset + len(line) < len(head):
                return ""  # a whole line that is not JSON: the loader reports it
            return _first_message_cut(fd, offset, line)
        offset += len(line) + 1
    return ""


def _first_message_cut(fd: int, start: int, line_start: bytes) -> str:
    """The first message of a record longer than the head: its first text, unless mini-claude
    added that (the output of a `!command`, an attached file): then the command, and the last text
    of the record, which is what the user typed (the agent adds it after what it carries)."""
    first = _text_prefix(line_start)
    kind, rest = added_context(first)
    if kind is None:
        return first
    parts = [shell_command(rest) if kind == SHELL_KEY else None]
    end = _line_end(fd, start + len(line_start))
    if end is not None:
        tail_start = max(start, end - TYPED_TAIL_BYTES)
        tail = os.pread(fd, end - tail_start, tail_start)
        at = tail.rfind(TEXT_KEY)
        if at >= 0:
            parts.append(_text_prefix(tail[at:]))
    return PART_SEPARATOR.join(part for part in parts if part)


def _line_end(fd: int, position: int) -> int | None:
    """Where the line going on at `position` ends (its newline), looking at most FIRST_LINE_MAX_BYTES on."""
    limit = position + FIRST_LINE_MAX_BYTES
    while position < limit:
        chunk = os.pread(fd, min(LINE_END_CHUNK_BYTES, limit - position), position)
        if not chunk:
            return None
        found = chunk.find(b"\n")
        if found >= 0:
            return position + found
        position += len(chunk)
    return None


def _text_prefix(line: bytes) -> str:
    """The start of the first `"text":"…"` string in a cut-off line, decoded as JSON."""
    start = line.find(TEXT_KEY)
    if start < 0:
        return ""
    chunk = line[start + len(TEXT_KEY) : start + len(TEXT_KEY) + PREVIEW_BYTES]
    text = chunk.decode("utf-8", "ignore")  # drops a character cut in half at the end
    try:
        decoded: str = _STRING_DECODER.raw_decode('"' + text)[0]  # the string ends within the chunk
        return decoded
    except ValueError:
        pass
    for cut in range(len(text), max(-1, len(text) - 7), -1):  # back off an escape cut in half
        try:
            shortened: str = json.loads('"' + text[:cut] + '"')
            return shortened
        except ValueError:
            continue
    return ""


def _count(value: object) -> int:
    return value if type(value) is int and value >= 0 else 0
