"""The transcript format: what each line of `<session-id>.jsonl` holds, and how a line is written.

Line 1 is the header; every later line is one record. Each record starts with `"type"` and `"n"`
(the conversation's message count after it) in that order, so the catalog can read a count from
the last line's first bytes without parsing the line. Records that add content to the
conversation say which role they belong to through their type (RECORD_ROLES); the loader appends
their blocks to the last message when the role is the same, as the agent does, so the message
list is rebuilt exactly.

    {"type":"session","format":1,"id":"…","started":"…","cwd":"…","project":"…","model":"…","version":"…"}
    {"type":"user","n":1,"at":"…","content":[{"type":"text","text":"…"}]}
    {"type":"memories","n":1,"at":"…","files":["user_role.md"],"content":[{"type":"text","text":"…"}]}
    {"type":"assistant","n":2,"at":"…","content":[…API content blocks…]}
    {"type":"tool_results","n":3,"at":"…","content":[{"type":"tool_result",…}]}
    {"type":"notice","n":3,"at":"…","content":[{"type":"text","text":"[The user interrupted …]"}]}
    {"type":"compaction","n":3,"at":"…","replaced":2,"focus":null,"content":[…summary blocks…]}
    {"type":"settings","n":3,"at":"…","model":"…","cwd":"…"}
    {"type":"checkpoint","n":3,"at":"…","turn":1,"path":"/…/app.py","digest":"<sha256>|null","problem":""}

A copy (of a session open elsewhere, or of a moved project's) adds to its header the session it
was copied from and how many messages it was made with: `"copied_from":"…","copied_messages":4`.
A session of print mode (`-p`) has `"print_mode":true` in its header; a conversation rewound
(`/rewind`) goes on in a new transcript whose header names the one it came from (`copied_from`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
from typing import Any

FORMAT = 1  # bumped when a reader of the old format would misread the new one
HEADER_TYPE = "session"
PRINT_MODE_KEY = "print_mode"  # in the header of a session of `-p`
# Content records and the role their blocks belong to.
RECORD_ROLES = {
    "user": "user",  # what the user typed
    "assistant": "assistant",  # the model's content blocks, as the API returned them
    "tool_results": "user",  # tool_result blocks answering the previous assistant message
    "memories": "user",  # recalled-memory reminders (with "files": the memory file names)
    "notice": "user",  # text mini-claude adds for the model, e.g. that the user interrupted
    "instructions": "user",  # a sub-folder's CLAUDE.md or a path rule, once a tool used a file there
}
COMPACTION_TYPE = "compaction"  # a summary standing for the first "replaced" messages
SETTINGS_TYPE = "settings"  # the model or working directory changed from here on
SUBAGENTS_FOLDER = "subagents"  # in the sessions folder: each sub-agent's own transcript
SUBAGENT_TYPE = "subagent"  # a sub-agent ran: its transcript's session id (a link, no message)
CHECKPOINT_TYPE = "checkpoint"  # a file's content kept before a file tool changed it
RECORD_TYPES = (*RECORD_ROLES, COMPACTION_TYPE, SETTINGS_TYPE, SUBAGENT_TYPE, CHECKPOINT_TYPE)

SESSION_ID_BYTES = 16  # 32 hex characters, like a uuid4 without dashes
SESSION_ID_PATTERN = re.compile(r"[0-9a-f]{32}")
TRANSCRIPT_SUFFIX = ".jsonl"
# The loader refuses larger files (reading them would take seconds and hundreds of MB of memory);
# the writer stops at this size too, so every transcript it leaves can be loaded.
MAX_TRANSCRIPT_BYTES = 200 * 2**20
# `{"type":"assistant","n":123,`: the start of every record line as `encode_line` writes it.
RECORD_PREFIX = re.compile(rb'\{"type":"([a-z_]+)","n":(\d+)[,}]')
HEADER_START = b'{"type":"session",'


def new_session_id() -> str:
    """Random rather than time-ordered: any 4-6 characters of it are a unique prefix to type,
    while time-ordered ids share their first characters within a day. Sessions are ordered by
    their file's modification time instead."""
    return os.urandom(SESSION_ID_BYTES).hex()


def is_transcript_name(name: str) -> bool:
    """`<session-id>.jsonl`: only such files are listed, found, or removed by retention."""
    stem = name.removesuffix(TRANSCRIPT_SUFFIX)
    return stem != name and SESSION_ID_PATTERN.fullmatch(stem) is not None


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def header_record(
    session_id: str, *, started: str, cwd: str, project: str, model: str, version: str
) -> dict[str, Any]:
    return {
        "type": HEADER_TYPE,
        "format": FORMAT,
        "id": session_id,
        "started": started,
        "cwd": cwd,
        "project": project,
        "model": model,
        "version": version,
    }


def encode_line(record: dict[str, Any]) -> bytes:
    """One record as one line of valid JSON, ending in a newline.

    Text stays readable UTF-8 (so `grep` works on a transcript); only a record holding a lone
    surrogate (a file name that was not UTF-8, kept by surrogateescape) is written with `\\u`
    escapes, which read back to the same string. JSON escapes every line break inside strings,
    so the record cannot span lines (U+2028 stays raw: readers must split on b"\\n" only)."""
    try:
        text = _dumps(record, ascii_only=False)
    except ValueError:  # NaN or infinity from a hostile server: not JSON, written as strings
        record = _finite(record)
        text = _dumps(record, ascii_only=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return _dumps(record, ascii_only=True).encode("ascii") + b"\n"


def _dumps(record: dict[str, Any], *, ascii_only: bool) -> str:
    return json.dumps(record, ensure_ascii=ascii_only, separators=(",", ":"), allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def json_object(line: bytes) -> dict[str, Any] | None:
    """A line read back as a JSON object; None for anything else (a torn or hand-edited line)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # a hostile line nested 100,000 deep
        return None
    return value if isinstance(value, dict) else None


def text_or_empty(value: object) -> str:
    """A field that should hold text, as read back: "" when it holds anything else (a hand edit)."""
    return value if isinstance(value, str) else ""


def too_large_problem(shown: str, size: int) -> str:
    return (
        f"{shown} is {size / 2**20:.0f} MB, more than the {MAX_TRANSCRIPT_BYTES // 2**20} MB a transcript "
        "may have: it cannot be loaded (it stays on disk; start a new session instead)"
    )
