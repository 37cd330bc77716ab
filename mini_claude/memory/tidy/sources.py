"""What tidy reads of past sessions, to find what was worth keeping and never saved: what the user
typed and the reply that ended each exchange, from the last few transcripts, each size-capped.
"What the user typed" is sessions/typed_input.py's, the session list's: a `!command` without its
output, never an attached file, a recalled memory, a notice, a tool call or its result."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_claude.core.untrusted import wrap
from mini_claude.memory.recall.history import DAY_SECONDS
from mini_claude.sessions.catalog import list_sessions
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.sessions.transcript.sessions_folder import SessionsFolderError, TranscriptError
from mini_claude.sessions.typed_input import typed_text

RECENT_SESSIONS = 5
SESSION_MAX_AGE_DAYS = 30
TRANSCRIPT_MAX_BYTES = 20 * 2**20  # a larger transcript is mostly tool output: skipped, not loaded
MESSAGE_MAX_CHARS = 1500
SESSION_MAX_CHARS = 6000
TOTAL_MAX_CHARS = 24_000
CONVERSATION_TAG = "conversation"


@dataclass(frozen=True)
class SessionExcerpt:
    session_id: str
    started: str  # ISO 8601, as the header says
    text: str  # `User: …` / `Assistant: …` lines, untrusted

    def wrapped(self) -> str:
        return wrap(CONVERSATION_TAG, self.text, session=self.session_id[:8], started=self.started[:10])


def recent_conversations(sessions_dir: Path, now: float) -> tuple[list[SessionExcerpt], list[str]]:
    """Excerpts of the newest RECENT_SESSIONS transcripts of the last SESSION_MAX_AGE_DAYS, within
    TOTAL_MAX_CHARS; and one line per transcript that could not be read."""
    try:
        summaries = list_sessions(sessions_dir)
    except SessionsFolderError as error:
        return [], [str(error)]
    excerpts: list[SessionExcerpt] = []
    problems: list[str] = []
    room = TOTAL_MAX_CHARS
    for summary in summaries:
        if len(excerpts) == RECENT_SESSIONS or room <= 0:
            break
        if summary.last_used < now - SESSION_MAX_AGE_DAYS * DAY_SECONDS:
            break  # newest first: the rest are older still
        if summary.problem is not None or summary.size > TRANSCRIPT_MAX_BYTES:
            continue
        try:
            loaded = load_transcript(summary.path)
        except TranscriptError as error:
            problems.append(str(error))
            continue
        text = _cut(exchanges_text(loaded.messages), min(SESSION_MAX_CHARS, room))
        if text:
            excerpts.append(SessionExcerpt(summary.id, loaded.header.started, text))
            room -= len(text)
    return excerpts, problems


def exchanges_text(messages: list[dict[str, Any]]) -> str:
    """`User: …` for each message the user typed, `Assistant: …` for the reply that ended it."""
    lines: list[str] = []
    reply = ""
    for message in messages:
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if message.get("role") == "assistant":
            texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
            reply = "\n".join(t for t in texts if isinstance(t, str)).strip() or reply
            continue
        typed = [text for block in blocks if (text := typed_text(block))]
        if not typed:
            continue  # tool results, recalled memories, notices: the exchange goes on
        if reply:
            lines.append("Assistant: " + _cut(reply, MESSAGE_MAX_CHARS))
        lines.append("User: " + _cut("\n".join(typed).strip(), MESSAGE_MAX_CHARS))
        reply = ""
    if reply:
        lines.append("Assistant: " + _cut(reply, MESSAGE_MAX_CHARS))
    return "\n".join(lines)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 12)].rstrip() + " […cut]"
