"""Reading a transcript back: its header, the conversation as the agent held it (repaired so the
next request is valid), the memories it recalled, its last compaction, and its problems.

A torn last line (a crash mid-write) is ignored silently; any other bad line is reported with the
file and line number and skipped, and the rest loads. A record is loaded only if its content is
what the API accepts (content.py). A damaged header is reported too, and the session loads with
its id taken from the file name (the other header fields unknown). Only a file that cannot be
read, holds nothing readable, or was written in a newer format is an error.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from mini_claude.core.files import strict_json
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import encodable_value
from mini_claude.sessions.checkpoints.file_checkpoints import Checkpoint, checkpoint_from_record
from mini_claude.sessions.loading.content import ContentProblem, checked_content, checked_summary
from mini_claude.sessions.loading.repair import repair_conversation
from mini_claude.sessions.transcript.records import (
    CHECKPOINT_TYPE,
    COMPACTION_TYPE,
    FORMAT,
    HEADER_TYPE,
    MAX_TRANSCRIPT_BYTES,
    RECORD_ROLES,
    RECORD_TYPES,
    SETTINGS_TYPE,
    SUBAGENT_TYPE,
    text_or_empty,
    too_large_problem,
)
from mini_claude.sessions.transcript.sessions_folder import TranscriptError, read_transcript

MAX_PROBLEMS_LISTED = 10
HEADER_FIELDS = ("id", "started", "cwd", "model")
Message = dict[str, Any]
Block = dict[str, Any]


@dataclass(frozen=True)
class SessionHeader:
    id: str
    started: str  # ISO 8601, UTC
    cwd: str
    project: str  # the project root the session belonged to ("" when not recorded)
    model: str
    version: str


@dataclass(frozen=True)
class Compaction:
    """Requests hold `summary` (the model's words, as text blocks) instead of the conversation's
    first `replaced` messages (agent/request_view.py); a transcript keeps it as a record."""

    summary: list[Block]
    replaced: int
    focus: str | None = None


@dataclass
class LoadedTranscript:
    path: Path
    header: SessionHeader
    messages: list[Message]
    recalled_files: list[str]  # memory file names already recalled, in order, once each
    last_compaction: Compaction | None
    model: str  # the model in use at the end (the header's, unless a settings record changed it)
    cwd: str
    problems: list[str] = field(default_factory=list)  # one line each, naming the file and line
    repairs: list[str] = field(default_factory=list)  # what was added so the conversation can go on
    # Tool results the repair added at the end (calls a crash left unanswered): saved on resume,
    # so the next load finds them in the file and has nothing to repair.
    appended: list[Block] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)  # files' content kept, for /rewind


def load_transcript(path: Path, *, shown: str | None = None) -> LoadedTranscript:
    """Raises TranscriptError (one line) when the file cannot be read, is too large, holds no
    header nor record, or was written in a newer format. `shown`: how messages name the file
    (its path, unless the caller names it otherwise)."""
    shown = shown or visible_path(str(path))
    data = read_transcript(path)
    if len(data) > MAX_TRANSCRIPT_BYTES:
        raise TranscriptError(too_large_problem(shown, len(data)))
    if not data or data.isspace():
        raise TranscriptError(f"{shown} is empty: no session was saved in it")
    lines = _lines(data)
    torn_index = len(lines) - 1  # the part after the last newline: b"" in a whole file
    read = _header(shown, path.stem, lines[0])
    conversation = RecordedConversation(read.header.model, read.header.cwd)
    problems = [] if read.problem is None else [f"{shown}: line 1: {read.problem}"]
    for index in range(0 if read.is_record else 1, len(lines)):
        raw = lines[index]
        if not raw or raw.isspace():  # isspace() stops at the first "{": no copy of a long line
            continue
        try:
            record = parse_record(raw)
        except (ValueError, RecursionError) as error:
            if index != torn_index:  # else: cut off by a crash mid-write; nothing of it is usable
                problems.append(f"{shown}: line {index + 1}: {_json_problem(error)}; skipped")
            continue
        problem = conversation.add(record)
        if problem is not None:
            problems.append(f"{shown}: line {index + 1}: {problem}; skipped")
    if not read.is_header and not conversation.records:
        raise TranscriptError(f"{shown}: no line of it is a session header or a record: not a transcript")
    if len(problems) > MAX_PROBLEMS_LISTED:
        more = len(problems) - MAX_PROBLEMS_LISTED
        problems = [*problems[:MAX_PROBLEMS_LISTED], f"{shown}: {more} more bad lines skipped"]
    repaired = repair_conversation(conversation.messages)
    compaction = conversation.compaction
    if compaction is not None:
        moved = repaired.new_index(compaction.replaced)
        compaction = Compaction(compaction.summary, moved, compaction.focus)
    return LoadedTranscript(
        path, read.header, repaired.messages, conversation.recalled, compaction, conversation.model,
        conversation.cwd, problems, repaired.repairs, repaired.appended, conversation.checkpoints,
    )  # fmt: skip


class RecordedConversation:
    """The messages rebuilt record by record, merging same-role records as the agent merges them."""

    def __init__(self, model: str, cwd: str) -> None:
        self.messages: list[Message] = []
        self.records = 0  # records taken
        self.recalled: list[str] = []
        self._recalled_set: set[str] = set()
        self.compaction: Compaction | None = None
        self.checkpoints: list[Checkpoint] = []
        self.model, self.cwd = model, cwd

    def add(self, record: Any) -> str | None:
        """Take one record; the reason it was not usable, or None."""
        if not isinstance(record, dict):
            return "not a JSON object"
        kind = record.get("type")
        if kind in RECORD_ROLES:
            try:
                content = checked_content(record.get("content"), RECORD_ROLES[kind])
            except ContentProblem as problem:
                return f"{'an' if kind == 'assistant' else 'a'} {kind} record the API would refuse: {problem}"
            files = record.get("files", [])
            if kind == "memories" and not _is_strings(files):
                return "a memories record whose files are not a list of names"
            self._append(RECORD_ROLES[kind], content)
            for name in files if kind == "memories" else ():
                if name not in self._recalled_set:
                    self._recalled_set.add(name)
                    self.recalled.append(name)
        elif kind == COMPACTION_TYPE:
            replaced, focus = record.get("replaced"), record.get("focus")
            try:
                summary = checked_summary(record.get("content"))
            except ContentProblem:
                summary = None
            if summary is None or type(replaced) is not int or replaced < 0:
                return "a compaction record without a summary or a count of replaced messages"
            focus = focus if isinstance(focus, str) else None
            self.compaction = Compaction(summary, min(replaced, len(self.messages)), focus)
        elif kind == CHECKPOINT_TYPE:
            checkpoint = checkpoint_from_record(record)
            if checkpoint is None:
                return "a checkpoint record without a turn and a path"
            self.checkpoints.append(checkpoint)
        elif kind == SETTINGS_TYPE:
            model, cwd = record.get("model", self.model), record.get("cwd", self.cwd)
            if not isinstance(model, str) or not isinstance(cwd, str) or not model:
                return "a settings record whose model or cwd is not text"
            self.model, self.cwd = model, cwd
        elif kind == SUBAGENT_TYPE:
            pass  # a link to a sub-agent's own transcript: nothing of this conversation
        else:
            shown = repr(kind)[:40] if isinstance(kind, str) else "no type"
            return f"unknown record type {shown} (written by a newer mini-claude?)"
        self.records += 1
        return None

    def _append(self, role: str, content: list[Block]) -> None:
        if self.messages and self.messages[-1]["role"] == role:
            self.messages[-1]["content"].extend(content)
        else:
            self.messages.append({"role": role, "content": list(content)})


def parse_record(line: bytes) -> Any:
    """One line's JSON (ValueError, RecursionError when it is none), a message or compaction
    record's content cleaned as the server's strings now are where they enter
    (`untrusted.encodable`): a transcript saved by an older version may hold a lone surrogate that
    would break every request it is sent in. Other fields (a cwd that is not UTF-8) are kept as
    they are."""
    record = strict_json.loads(line)
    if isinstance(record, dict) and record.get("type") in (*RECORD_ROLES, COMPACTION_TYPE):
        return {**record, "content": encodable_value(record.get("content"))}
    return record


def _lines(data: bytes) -> list[bytes]:
    """The file's lines, split at b"\\n" only (never splitlines(): U+2028 and friends may sit raw
    inside strings). Each line is decoded on its own by json.loads: one bad byte costs only its
    line, and one emoji does not make a 20 MB string of the whole file four bytes per character."""
    return data.removeprefix(codecs.BOM_UTF8).split(b"\n")  # an editor may add a BOM


class _HeaderRead(NamedTuple):
    header: SessionHeader
    problem: str | None  # what is wrong with line 1, if anything
    is_header: bool  # line 1 is a session header (whole or not)
    is_record: bool  # line 1 is a record, to be loaded as one


def _header(shown: str, file_id: str, line: bytes) -> _HeaderRead:
    """Line 1. A damaged header costs only what it held: the id is the file's name, the rest is
    unknown (""). Raises TranscriptError for a header of a newer format (misreading it would be
    worse than not reading it)."""
    unknown = SessionHeader(id=file_id, started="", cwd="", project="", model="", version="")
    named = "the id is the file's name"
    try:
        header = json.loads(line)
    except (ValueError, RecursionError) as error:
        return _HeaderRead(
            unknown, f"not a readable session header: {_json_problem(error)}; {named}", False, False
        )
    if isinstance(header, dict) and header.get("type") in RECORD_TYPES:
        return _HeaderRead(unknown, f"no session header (a record instead); {named}", False, True)
    if not isinstance(header, dict) or header.get("type") != HEADER_TYPE:
        return _HeaderRead(unknown, f"not a mini-claude session header; {named}", False, False)
    version = header.get("format")
    if type(version) is int and version > FORMAT:
        raise TranscriptError(
            f"{shown} was written in transcript format {version!r}, newer than this mini-claude reads "
            f"({FORMAT}): update mini-claude to open it"
        )
    missing = [name for name in ("format", *HEADER_FIELDS) if not _is_field(header, name)]
    fields = {name: "" if name in missing else header[name] for name in HEADER_FIELDS}
    fields["id"] = fields["id"] or file_id
    parsed = SessionHeader(
        **fields, project=text_or_empty(header.get("project")), version=text_or_empty(header.get("version"))
    )
    problem = f"the session header lacks {', '.join(missing)} (taken as unknown)" if missing else None
    return _HeaderRead(parsed, problem, True, False)


def _is_field(header: dict[str, Any], name: str) -> bool:
    value = header.get(name)
    return type(value) is int if name == "format" else isinstance(value, str)


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _json_problem(error: ValueError | RecursionError) -> str:
    if isinstance(error, json.JSONDecodeError):  # a msg may end in "at": "Unterminated string starting at"
        at = " " if error.msg.endswith(" at") else " at "
        return f"not valid JSON ({error.msg}{at}column {error.colno})"
    if isinstance(error, UnicodeDecodeError):
        return "not valid UTF-8 text"
    if isinstance(error, RecursionError):
        return "not valid JSON (nested too deeply)"
    return f"not valid JSON ({error})"
