"""Saving the conversation as it happens: the agent's save step, called with each change to the
conversation (a message added, a compaction) before anyone else hears of it, writes it to the
current transcript. A new conversation (/clear) gets a new file, a resumed one continues in its
own; the old files stay.

Saving never stops the session: a failure is one warning line (the writer's `warn`)."""

from __future__ import annotations

import contextlib
import logging
import threading
from pathlib import Path
from typing import Any

from mini_claude.core.events import ContextCompacted, Event, MessageAdded
from mini_claude.sessions.checkpoints.file_checkpoints import FileCheckpoints
from mini_claude.sessions.checkpoints.side_files import SideFileError, copy_side_files
from mini_claude.sessions.retention import remove_expired_sessions
from mini_claude.sessions.transcript.records import SUBAGENTS_FOLDER
from mini_claude.sessions.transcript.sessions_folder import SessionsFolderError
from mini_claude.sessions.transcript.writer import TranscriptWriter

log = logging.getLogger("mini_claude.sessions")


class TranscriptRecorder:
    def __init__(self, first: TranscriptWriter) -> None:
        """Save into `first`; the transcripts after it (a new conversation, a resumed one) take
        its folder, working directory, project and warning callback, and the model of the time."""
        self.sessions_dir = first.sessions_dir
        self.cwd, self.project, self.model = first.cwd, first.project, first.model
        self._warn = first.warn
        self.writer = first
        self.checkpoints = FileCheckpoints()  # the files' content kept before each change, for /rewind
        # Sub-agents side by side may change files at once: one checkpoint is taken at a time.
        self._checkpointing = threading.Lock()

    def __call__(self, event: Event) -> None:
        match event:
            case MessageAdded(kind="user", content=content):
                self.checkpoints.new_turn()
                self.writer.add("user", list(content))
            case MessageAdded(kind="memories", content=content, memory_files=files):
                self.writer.add_memories(list(content), list(files))
            case MessageAdded(kind=kind, content=content):
                self.writer.add(kind, list(content))
            case ContextCompacted(summary=summary, replaced=replaced, focus=focus):
                self.writer.add_compaction(list(summary), replaced, focus)

    @property
    def session_id(self) -> str:
        return self.writer.session_id

    def before_change(self, path: Path) -> None:
        """A file tool is about to change `path`: what it holds is kept first (once a turn)."""
        with self._checkpointing:
            checkpoint = self.checkpoints.take(path, self.sessions_dir, self.session_id)
            if checkpoint is not None:
                self.writer.add_checkpoint(checkpoint.record())

    def start_new(self) -> None:
        """A new conversation: the current transcript is closed (it stays), the next one starts
        with the next message."""
        self.switch_to(self._new_writer())
        self.checkpoints = FileCheckpoints()

    def rewound(
        self, messages: list[dict[str, Any]], turns: int, summary: list[dict[str, Any]] | None, replaced: int
    ) -> None:
        """The conversation goes back to `messages` (its first `turns` user messages): it goes on
        in a new transcript holding them, their checkpoints (and the content they keep) and the
        summary still standing for its first `replaced` messages; the transcript it was rewound
        in stays as it was, to be resumed."""
        previous = self.writer
        writer = self._new_writer(copied_from=previous.session_id)
        kept = [checkpoint for checkpoint in self.checkpoints.kept if checkpoint.turn < turns]
        if kept:
            with contextlib.suppress(OSError, SideFileError, SessionsFolderError):
                copy_side_files(self.sessions_dir, previous.session_id, self.sessions_dir, writer.session_id)
        for message in messages:
            writer.add("assistant" if message["role"] == "assistant" else "user", list(message["content"]))
        if summary is not None:
            writer.add_compaction(summary, replaced, None)
        for checkpoint in kept:
            writer.add_checkpoint(checkpoint.record())
        self.switch_to(writer)
        self.checkpoints.continue_with(kept, turns)

    def open_existing(self, path: Path, fd: int | None = None) -> TranscriptWriter:
        """A writer appending to the saved transcript at `path` (`fd`: open and locked already),
        not in use yet (see switch_to). Raises SessionInUse when another mini-claude has it open."""
        return TranscriptWriter.continuing(
            path, model=self.model, cwd=self.cwd, project=self.project, warn=self._warn, fd=fd
        )

    def switch_to(self, writer: TranscriptWriter) -> None:
        """Save into `writer` from now on; the current transcript is closed."""
        previous, self.writer = self.writer, writer
        previous.close()

    def note_model(self, model: str) -> None:
        """The model changed (/model): recorded in the transcript, and used for the next ones."""
        self.model = model
        self.writer.note_settings(model=model)

    def close(self) -> None:
        self.writer.close()

    def remove_expired_in_background(self, retention_days: int) -> None:
        """Remove transcripts older than `retention_days` on a daemon thread, never the current one
        (nor one another mini-claude has open: retention checks the lock)."""
        keep = self.session_id
        threading.Thread(
            target=self._remove_expired, args=(retention_days, keep), name="session-retention", daemon=True
        ).start()

    def _remove_expired(self, retention_days: int, keep: str) -> None:
        report = remove_expired_sessions(self.sessions_dir, retention_days=retention_days, keep=keep)
        # Sub-agents' transcripts go as sessions do (one in use is locked: it stays).
        subagents = remove_expired_sessions(
            self.sessions_dir / SUBAGENTS_FOLDER, retention_days=retention_days, keep=None
        )
        report.removed += subagents.removed
        report.problems += subagents.problems
        if report.removed:
            log.info("removed %d sessions older than %d days", len(report.removed), retention_days)
        for problem in report.problems:
            log.warning("%s", problem)

    def _new_writer(self, copied_from: str = "") -> TranscriptWriter:
        return TranscriptWriter(
            self.sessions_dir, cwd=self.cwd, project=self.project, model=self.model, warn=self._warn,
            copied_from=copied_from,
        )  # fmt: skip
