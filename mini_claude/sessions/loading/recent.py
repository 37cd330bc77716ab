"""The end of a conversation, read from the end of its transcript: what a resumed session shows
of where it was, in a few milliseconds, while the whole transcript loads on a thread.

Only complete records after the last few user records are parsed; a bad line among them is left
out silently (the full load reports it, with its line number).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.sessions.loading.loader import RecordedConversation, parse_record
from mini_claude.sessions.transcript.records import RECORD_PREFIX, RECORD_ROLES
from mini_claude.sessions.transcript.sessions_folder import TranscriptError, open_transcript_for_reading

FIRST_READ_BYTES = 256 * 1024  # doubled until enough user records are in it
RECENT_MAX_BYTES = 16 * 2**20  # the last exchanges hold huge tool outputs: show what fits
USER_RECORD_START = b'{"type":"user",'
Message = dict[str, Any]


@dataclass
class RecentPart:
    messages: list[Message] = field(default_factory=list)  # merged by role, as the loader does
    earlier: int = 0  # messages of the conversation before these (at least: a count in the file)


def recent_messages(path: Path, user_records: int) -> RecentPart:
    """The messages from the `user_records`-th last thing the user typed to the end (or from as
    far back as RECENT_MAX_BYTES reach). Raises TranscriptError when the file cannot be read."""
    fd, info = open_transcript_for_reading(path)
    try:
        data = _read_back(fd, info.st_size, user_records)
    except OSError as error:
        raise TranscriptError(f"cannot read {path}: {error.strerror}") from None
    finally:
        os.close(fd)
    # Not the first line: the header, or a line cut by where the read started. Nor what follows
    # the last newline: a torn record.
    lines = data.split(b"\n")[1:-1]
    starts = [index for index, line in enumerate(lines) if line.startswith(USER_RECORD_START)]
    first = starts[-user_records] if len(starts) >= user_records else (starts[0] if starts else 0)
    part = RecentPart()
    prefix = RECORD_PREFIX.match(lines[first]) if first < len(lines) else None
    if prefix is not None:
        part.earlier = max(int(prefix.group(2)) - 1, 0)
    conversation = RecordedConversation("", "")
    for line in lines[first:]:
        try:
            record = parse_record(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and record.get("type") in RECORD_ROLES:
            conversation.add(record)  # as the loader takes it: one the API would refuse is left out
    part.messages = conversation.messages
    return part


def _read_back(fd: int, size: int, user_records: int) -> bytes:
    """The file's last bytes holding `user_records` user records (or RECENT_MAX_BYTES of them)."""
    want = FIRST_READ_BYTES
    while True:
        start = max(size - want, 0)
        data = os.pread(fd, size - start, start)
        if start == 0 or want >= RECENT_MAX_BYTES or data.count(b"\n" + USER_RECORD_START) >= user_records:
            return data
        want *= 2
