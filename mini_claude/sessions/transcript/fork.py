"""Copying a transcript under a new session id: how a session that another mini-claude has open
is resumed without the two of them writing into one file, and how a session of a project folder
that no longer exists is resumed in the project where mini-claude now runs.

A copy of a session in use takes only its finished exchanges: the other mini-claude may be in
the middle of a turn (its message not answered yet, its tool calls running), which is its own to
finish. The copy is created locked, so no other mini-claude can take it before its resumer does.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude import __version__
from mini_claude.core.paths import visible_path
from mini_claude.sessions.checkpoints.side_files import SideFileError, copy_side_files
from mini_claude.sessions.transcript.records import (
    HEADER_TYPE,
    RECORD_PREFIX,
    TRANSCRIPT_SUFFIX,
    encode_line,
    header_record,
    json_object,
    new_session_id,
    now_iso,
)
from mini_claude.sessions.transcript.sessions_folder import (
    SessionsFolderError,
    TranscriptError,
    create_transcript,
    read_transcript,
)

# Records after which the conversation is at rest: a reply that calls no tool, or the note that
# the user interrupted the turn.
TURN_END_TYPES = (b"assistant", b"notice")


@dataclass(frozen=True)
class Copied:
    path: Path
    fd: int  # open for appending and locked: hand it to the writer that goes on in it


def copy_transcript(
    source: Path, *, into: Path | None = None, finished_only: bool = True,
    header: dict[str, Any] | None = None,
) -> Copied:  # fmt: skip
    """A new transcript in `into` (default: beside `source`) holding `source`'s records, only
    those of its finished exchanges with `finished_only`. Its header is the source's, or a new
    one from `header`'s fields (cwd, project, model) when the source's cannot be read, with
    `header`'s cwd and project when copied into another folder; it names the new id, the session
    it was copied from and how many messages it copied. Raises TranscriptError (one line)."""
    shown = visible_path(str(source))
    data = read_transcript(source)
    data = data[: data.rfind(b"\n") + 1]  # the other mini-claude may be in the middle of a line
    header_line, _, records = data.partition(b"\n")
    fields = header or {}
    found = json_object(header_line)
    if found is None or found.get("type") != HEADER_TYPE:
        is_record = found is not None and RECORD_PREFIX.match(header_line) is not None
        records = header_line + b"\n" + records if is_record else records
        found = header_record(
            "", started=now_iso(), cwd=fields.get("cwd", ""), project=fields.get("project", ""),
            model=fields.get("model", ""), version=__version__,
        )  # fmt: skip
    elif into is not None and into != source.parent:
        found.update({key: fields[key] for key in ("cwd", "project") if key in fields})
    if finished_only:
        records = finished_part(records)
    session_id = new_session_id()
    found.update(id=session_id, copied_from=source.stem, copied_messages=_message_count(records))
    target = (into or source.parent) / f"{session_id}{TRANSCRIPT_SUFFIX}"
    try:
        fd = create_transcript(target.parent, target.name, encode_line(found) + records)  # "type" first
    except SessionsFolderError as error:
        raise TranscriptError(str(error)) from None
    except OSError as error:
        raise TranscriptError(f"cannot copy {shown} to a new session: {error.strerror}") from None
    with contextlib.suppress(OSError, SideFileError, SessionsFolderError):  # a rewind may restore less
        copy_side_files(source.parent, source.stem, target.parent, session_id)
    return Copied(target, fd)


def finished_messages(path: Path) -> int:
    """How many messages the finished exchanges of the transcript at `path` hold (what a copy of
    it would take). Raises TranscriptError."""
    data = read_transcript(path)
    records = data[: data.rfind(b"\n") + 1].partition(b"\n")[2]
    return _message_count(finished_part(records))


def finished_part(records: bytes) -> bytes:
    """The records (whole lines) up to the end of the last finished exchange: b"" when none is."""
    end = len(records)
    while end > 0:
        start = records.rfind(b"\n", 0, end - 1) + 1
        if _ends_a_turn(records[start : end - 1]):
            return records[:end]
        end = start
    return b""


def _ends_a_turn(line: bytes) -> bool:
    prefix = RECORD_PREFIX.match(line)
    kind = prefix.group(1) if prefix else None
    if kind is not None and kind not in TURN_END_TYPES:
        return False
    record = json_object(line)  # a hand-edited line may lack the prefix the writer gives
    if record is None or record.get("type") not in ("assistant", "notice"):
        return False
    content = record.get("content")
    blocks = content if isinstance(content, list) else []
    return record["type"] == "notice" or not any(
        isinstance(block, dict) and block.get("type") == "tool_use" for block in blocks
    )


def _message_count(records: bytes) -> int:
    """The message count the last record carries (0: none does)."""
    last = records[records.rfind(b"\n", 0, len(records) - 1) + 1 :]
    prefix = RECORD_PREFIX.match(last)
    return int(prefix.group(2)) if prefix else 0
