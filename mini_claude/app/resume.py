"""Resuming a saved session: which one (`-c`, `-r ID`, `/resume`), loading it, and handing it to
the agent as a conversation that goes on saving in the same transcript.

A session open in another mini-claude is continued in a copy of its finished exchanges (a new
session id; the other goes on in the original): refusing would leave a session out of reach for
as long as a forgotten or hung mini-claude holds it, and two writers in one file would interleave
two conversations. A session of a project folder that no longer exists (moved, renamed) is
continued in a copy in this project's sessions.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mini_claude.core.config import Settings, memory_project_root
from mini_claude.core.paths import visible_path
from mini_claude.sessions.catalog import SessionSummary, most_recent_session
from mini_claude.sessions.checkpoints.turns import user_turns
from mini_claude.sessions.loading.loader import LoadedTranscript, load_transcript
from mini_claude.sessions.lookup import (
    ID_SHOWN_CHARS,
    LIST_COMMAND,
    SessionNotFound,
    SessionOfAMovedProject,
    find_session,
    newest_of_a_moved_project,
)
from mini_claude.sessions.transcript.fork import copy_transcript, finished_messages
from mini_claude.sessions.transcript.reopen import SessionInUse, is_in_use
from mini_claude.sessions.transcript.sessions_folder import SessionsFolderError, TranscriptError
from mini_claude.sessions.transcript.writer import TranscriptWriter

if TYPE_CHECKING:
    from mini_claude.app.session import Session

log = logging.getLogger("mini_claude")


@dataclass(frozen=True)
class ResumeRequest:
    """What the command line asked for: `-c` (latest), `-r ID` (query), `-r` alone (query "")."""

    latest: bool = False
    query: str | None = None
    fork: bool = False  # --fork-session: go on in a copy, the session itself left as it was

    @property
    def wanted(self) -> bool:
        return self.latest or self.query is not None

    @property
    def pick(self) -> bool:
        """`-r` without an id: the user chooses from a list."""
        return not self.latest and self.query == ""


class ResumeError(Exception):
    """The session cannot be resumed; the message says why (and what to do) in one line."""


@dataclass
class Opened:
    """A session about to be resumed: its transcript is ours to append to (locked), not loaded yet."""

    writer: TranscriptWriter
    copied_from: str | None = None  # the session (in use elsewhere, or moved) this one is a copy of
    moved_from: str | None = None  # the project folder, no longer there, the copied session was of
    forked: bool = False  # copied because --fork-session asked for it

    @property
    def session_id(self) -> str:
        return self.writer.session_id

    @property
    def note(self) -> str | None:
        """What the user should know before going on (one line), if anything."""
        if self.copied_from is None:
            return None
        original, copy = self.copied_from[:ID_SHOWN_CHARS], self.session_id[:ID_SHOWN_CHARS]
        if self.forked:
            return f"Session {original} continues in a new session, {copy}; {original} stays as it was."
        if self.moved_from is not None:
            return (
                f"Session {original} was saved for {visible_path(self.moved_from)}, which no longer exists: "
                f"continuing it here as {copy} (the original stays in that project's folder)."
            )
        return (
            f"Session {original} is open in another mini-claude: continuing in a copy of its finished "
            f"exchanges, {copy} (a turn running there goes on in the original)."
        )


@dataclass
class Resumed:
    loaded: LoadedTranscript
    session_id: str  # the transcript the conversation goes on in
    warnings: list[str] = field(default_factory=list)  # one line each: bad lines skipped, repairs


def requested_session(settings: Settings, request: ResumeRequest) -> SessionSummary:
    """The session `-c` or `-r ID` names (not `-r` alone: the UI offers a choice for that)."""
    if request.latest:
        return latest_session(settings)
    return named_session(settings, request.query or "")


def latest_session(settings: Settings) -> SessionSummary:
    """The most recent session of this project that can be resumed (`-c`). When that is a copy
    still open in another mini-claude without a finished exchange of its own yet, it is its
    original over again: the original is the one (several `-c` at once copy the session they
    mean, not each other's copies)."""
    try:
        summary = most_recent_session(settings.sessions_dir)
    except SessionsFolderError as error:
        raise ResumeError(str(error)) from None
    if summary is None:
        root = visible_path(str(memory_project_root(settings.project_dir)))
        moved = newest_of_a_moved_project(settings.sessions_dir)
        hint = ""
        if moved is not None:
            hint = (
                f" The newest session of {visible_path(moved.project)}, a folder that no longer exists, is "
                f"{moved.id[:ID_SHOWN_CHARS]}: `mini-claude -r {moved.id[:8]}` continues it here."
            )
        raise ResumeError(f"No saved session to continue in {root}: start one with mini-claude.{hint}")
    seen = {summary.id}
    while summary.copied_from and is_in_use(summary.path):
        try:
            if finished_messages(summary.path) > summary.copied_messages:
                break
            original = find_session(settings.sessions_dir, summary.copied_from)
        except (SessionNotFound, SessionsFolderError, TranscriptError):
            break
        if original.problem is not None or original.id in seen:
            break
        summary = original
        seen.add(summary.id)
    return summary


def named_session(settings: Settings, query: str, *, list_command: str = LIST_COMMAND) -> SessionSummary:
    """The session whose id is `query` or starts with it (`-r ID`, `/resume ID`): of this project,
    or of a project folder that no longer exists (it is then continued here, see open_session)."""
    try:
        return find_session(settings.sessions_dir, query, list_command=list_command)
    except SessionOfAMovedProject as moved:
        return moved.summary
    except (SessionNotFound, SessionsFolderError) as error:
        raise ResumeError(str(error)) from None


def open_session(session: Session, summary: SessionSummary, *, fork: bool = False) -> Opened:
    """Take the session's transcript for appending (fast: no loading yet); with `fork`, a copy of
    its finished exchanges under a new id. Raises ResumeError."""
    short_id = summary.id[:ID_SHOWN_CHARS]
    if summary.id == session.transcript.session_id:
        raise ResumeError(f"Session {short_id} is the one in use here.")
    if summary.problem is not None:
        raise ResumeError(f"Session {short_id} cannot be resumed: {summary.problem}")
    recorder = session.transcript
    fields = {"cwd": recorder.cwd, "project": recorder.project, "model": recorder.model}
    session.extensions.started = True  # SessionStart hooks hear "resume" once it is loaded
    try:
        if summary.path.parent != recorder.sessions_dir:  # of a project folder no longer there
            copy = copy_transcript(
                summary.path, into=recorder.sessions_dir, finished_only=is_in_use(summary.path), header=fields
            )
            writer = recorder.open_existing(copy.path, copy.fd)
            return Opened(
                writer, copied_from=summary.id, moved_from=summary.project or str(summary.path.parent)
            )
        if fork:
            copy = copy_transcript(summary.path, header=fields)
            return Opened(recorder.open_existing(copy.path, copy.fd), copied_from=summary.id, forked=True)
        try:
            return Opened(recorder.open_existing(summary.path))
        except SessionInUse:
            copy = copy_transcript(summary.path, header=fields)
            return Opened(recorder.open_existing(copy.path, copy.fd), copied_from=summary.id)
    except (TranscriptError, SessionInUse) as error:
        raise ResumeError(str(error)) from None


def finish_resume(session: Session, opened: Opened) -> Resumed:
    """Load the opened transcript and go on with it in `session`: the slow part (a 20 MB
    transcript takes ~150 ms), which the REPL does while its prompt is up. Raises ResumeError
    (the transcript released, a copy removed) whatever goes wrong, and then nothing has changed.
    The answers the repair gave calls a crash left open are saved, so they are given once."""
    writer = opened.writer
    try:
        loaded = load_transcript(writer.path)
    except Exception as error:  # a bug of ours in reading a damaged file must not end the session
        writer.close()
        if opened.copied_from is not None:
            with contextlib.suppress(OSError):
                writer.path.unlink()
        if isinstance(error, TranscriptError):
            raise ResumeError(str(error)) from None
        log.exception("loading %s failed", writer.path)
        raise ResumeError(
            f"{visible_path(str(writer.path))} could not be loaded ({type(error).__name__}: {error}; "
            "details in the debug log)"
        ) from error
    recorder = session.transcript
    changed = {"model": recorder.model, "cwd": recorder.cwd}
    changed = {key: value for key, value in changed.items() if getattr(loaded, key) != value}
    if changed:
        writer.note_settings(**changed)
    recorder.switch_to(writer)
    session.permissions.new_conversation()  # the grants of the conversation left end with it
    session.agent.continue_conversation(
        loaded.messages, compaction=loaded.last_compaction, recalled=loaded.recalled_files
    )
    recorder.checkpoints.continue_with(loaded.checkpoints, len(user_turns(loaded.messages)))
    if loaded.appended:
        writer.add("tool_results", loaded.appended)
    session.extensions.start("resume")
    return Resumed(loaded, writer.session_id, [*loaded.problems, *loaded.repairs])
