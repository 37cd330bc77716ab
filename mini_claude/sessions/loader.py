"""Reading a transcript back: its header, the conversation as the agent held it (repaired so the
next request is valid), the memories it recalled, its last compaction, and its problems.

A torn last line (a crash mid-write) is ignored silently; any other bad line is reported with the
file and line number and skipped, and the rest loads. Only a missing or unusable header, or a
file that cannot be read at all, is an error.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.paths import visible_path
from mini_claude.sessions.folder import TranscriptError, read_transcript
from mini_claude.sessions.records import (
    COMPACTION_TYPE,
    FORMAT,
    HEADER_TYPE,
    MAX_TRANSCRIPT_BYTES,
    RECORD_ROLES,
    SETTINGS_TYPE,
    too_large_problem,
)
from mini_claude.sessions.repair import repair_conversation
from mini_claude.untrusted import encodable_value

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
    summary: list[Block]
    replaced: int  # the summary stands for `messages[:replaced]` of the loaded conversation
    focus: str | None
    at: str


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


def load_transcript(path: Path) -> LoadedTranscript:
    """Raises TranscriptError (one line) when the file cannot be read or has no usable header."""
    shown = visible_path(str(path))
    data = read_transcript(path)
    if len(data) > MAX_TRANSCRIPT_BYTES:
        raise TranscriptError(too_large_problem(shown, len(data)))
    if not data or data.isspace():
        raise TranscriptError(f"{shown} is empty: no session was saved in it")
    lines = _lines(data)
    torn_index = len(lines) - 1  # the part after the last newline: b"" in a whole file
    header = _header(shown, lines[0])
    conversation = _Conversation(header)
    problems: list[str] = []
    for index in range(1, len(lines)):
        raw = lines[index]
        if not raw or raw.isspace():  # isspace() stops at the first "{": no copy of a long line
            continue
        try:
            record = encodable_record(json.loads(raw, parse_constant=_refuse_constant))
        except (ValueError, RecursionError) as error:
            if index != torn_index:  # else: cut off by a crash mid-write; nothing of it is usable
                problems.append(f"{shown}: line {index + 1}: {_json_problem(error)}; skipped")
            continue
        problem = conversation.add(record)
        if problem is not None:
            problems.append(f"{shown}: line {index + 1}: {problem}; skipped")
    if len(problems) > MAX_PROBLEMS_LISTED:
        more = len(problems) - MAX_PROBLEMS_LISTED
        problems = [*problems[:MAX_PROBLEMS_LISTED], f"{shown}: {more} more bad lines skipped"]
    repaired = repair_conversation(conversation.messages)
    compaction = conversation.compaction
    if compaction is not None and repaired.prepended:
        compaction = Compaction(
            compaction.summary, compaction.replaced + repaired.prepended, compaction.focus, compaction.at
        )
    return LoadedTranscript(
        path, header, repaired.messages, conversation.recalled, compaction, conversation.model,
        conversation.cwd, problems, repaired.repairs,
    )  # fmt: skip


class _Conversation:
    """The messages rebuilt record by record, merging same-role records as the agent merges them."""

    def __init__(self, header: SessionHeader) -> None:
        self.messages: list[Message] = []
        self.recalled: list[str] = []
        self._recalled_set: set[str] = set()
        self.compaction: Compaction | None = None
        self.model, self.cwd = header.model, header.cwd

    def add(self, record: Any) -> str | None:
        """Take one record; the reason it was not usable, or None."""
        if not isinstance(record, dict):
            return "not a JSON object"
        kind = record.get("type")
        if kind in RECORD_ROLES:
            content = record.get("content")
            if not _is_blocks(content):
                return f"a {kind} record without a list of content blocks"
            files = record.get("files", [])
            if kind == "memories" and not _is_strings(files):
                return "a memories record whose files are not a list of names"
            self._append(RECORD_ROLES[kind], content)
            for name in files if kind == "memories" else ():
                if name not in self._recalled_set:
                    self._recalled_set.add(name)
                    self.recalled.append(name)
        elif kind == COMPACTION_TYPE:
            summary, replaced, focus = record.get("content"), record.get("replaced"), record.get("focus")
            if not _is_blocks(summary) or type(replaced) is not int or replaced < 0:
                return "a compaction record without a summary or a count of replaced messages"
            focus = focus if isinstance(focus, str) else None
            at = record.get("at") if isinstance(record.get("at"), str) else ""
            self.compaction = Compaction(summary, min(replaced, len(self.messages)), focus, at)
        elif kind == SETTINGS_TYPE:
            model, cwd = record.get("model", self.model), record.get("cwd", self.cwd)
            if not isinstance(model, str) or not isinstance(cwd, str) or not model:
                return "a settings record whose model or cwd is not text"
            self.model, self.cwd = model, cwd
        else:
            return f"unknown record type {kind!r} (written by a newer mini-claude?)"
        return None

    def _append(self, role: str, content: list[Block]) -> None:
        if self.messages and self.messages[-1]["role"] == role:
            self.messages[-1]["content"].extend(content)
        else:
            self.messages.append({"role": role, "content": list(content)})


def encodable_record(record: Any) -> Any:
    """A message or compaction record with its content cleaned as the server's strings now are
    where they enter (`untrusted.encodable`): a transcript saved by an older version may hold a
    lone surrogate that would break every request it is sent in. Other fields (a cwd that is not
    UTF-8) are kept as they are. Raises RecursionError on content nested too deeply."""
    if isinstance(record, dict) and record.get("type") in (*RECORD_ROLES, COMPACTION_TYPE):
        return {**record, "content": encodable_value(record.get("content"))}
    return record


def _lines(data: bytes) -> list[bytes]:
    """The file's lines, split at b"\\n" only (never splitlines(): U+2028 and friends may sit raw
    inside strings). Each line is decoded on its own by json.loads: one bad byte costs only its
    line, and one emoji does not make a 20 MB string of the whole file four bytes per character."""
    return data.removeprefix(codecs.BOM_UTF8).split(b"\n")  # an editor may add a BOM


def _header(shown: str, line: bytes) -> SessionHeader:
    try:
        header = json.loads(line)
    except (ValueError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("type") != HEADER_TYPE:
        raise TranscriptError(f"{shown}: line 1 is not a mini-claude session header: not a transcript")
    version = header.get("format")
    if type(version) is not int or version > FORMAT:
        raise TranscriptError(
            f"{shown} was written in transcript format {version!r}, newer than this mini-claude reads "
            f"({FORMAT}): update mini-claude to open it"
        )
    missing = [name for name in HEADER_FIELDS if not isinstance(header.get(name), str)]
    if missing:
        raise TranscriptError(f"{shown}: the session header lacks {', '.join(missing)}: not loaded")
    return SessionHeader(
        id=header["id"],
        started=header["started"],
        cwd=header["cwd"],
        project=_text_or_empty(header.get("project")),
        model=header["model"],
        version=_text_or_empty(header.get("version")),
    )


def _text_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _is_blocks(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(block, dict) and isinstance(block.get("type"), str) for block in value)
    )


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _refuse_constant(name: str) -> None:
    """NaN and Infinity: Python's json reads them, but a request holding one is not JSON at all,
    so a conversation keeping one could never be sent again."""
    raise ValueError(f"{name} is not a JSON number")


def _json_problem(error: ValueError | RecursionError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"not valid JSON ({error.msg} at column {error.colno})"
    if isinstance(error, UnicodeDecodeError):
        return "not valid UTF-8 text"
    if isinstance(error, RecursionError):
        return "not valid JSON (nested too deeply)"
    return f"not valid JSON ({error})"
