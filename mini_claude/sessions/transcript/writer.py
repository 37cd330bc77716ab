"""Writing a session's transcript as it happens: every record is one line, appended with a single
`os.write` on an O_APPEND descriptor the moment it is added, so a crash (kill -9) loses at most
the record being written and leaves at most one torn last line, which the loader ignores.

Saving never interrupts the session: the first failure (full disk, folder gone, anything) stops
the writer, which reports one warning line through `warn`; the conversation goes on unsaved.
While a writer has its file open it holds an exclusive `flock` on it, so another mini-claude
can tell the session is in use (and retention leaves it alone); the lock ends with the process.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mini_claude import __version__
from mini_claude.core.files.atomic import write_all
from mini_claude.core.paths import visible_path
from mini_claude.sessions.transcript.records import (
    CHECKPOINT_TYPE,
    COMPACTION_TYPE,
    MAX_TRANSCRIPT_BYTES,
    PRINT_MODE_KEY,
    RECORD_ROLES,
    SETTINGS_TYPE,
    SUBAGENT_TYPE,
    TRANSCRIPT_SUFFIX,
    encode_line,
    header_record,
    new_session_id,
    now_iso,
)
from mini_claude.sessions.transcript.reopen import reopen_transcript
from mini_claude.sessions.transcript.sessions_folder import SessionsFolderError, create_transcript

log = logging.getLogger("mini_claude.sessions")

ID_ATTEMPTS = 3  # a fresh random id colliding even once is practically impossible
Block = dict[str, Any]


class TranscriptWriter:
    """One session's transcript. The file is created with the first record, so a session in
    which nothing was said leaves no file behind."""

    def __init__(
        self,
        sessions_dir: Path,
        *,
        cwd: str | os.PathLike[str],
        project: str | os.PathLike[str],
        model: str,
        warn: Callable[[str], None] | None = None,
        session_id: str | None = None,
        print_mode: bool = False,
        copied_from: str = "",
    ) -> None:
        self.sessions_dir = Path(sessions_dir)
        self.session_id = session_id or new_session_id()
        self.started = now_iso()
        self.cwd, self.project, self.model = os.fspath(cwd), os.fspath(project), model
        self.print_mode = print_mode  # a session of `-p`: its header says so
        self.copied_from = copied_from  # a rewound conversation: the session it was rewound in
        self.stopped: str | None = None  # why saving stopped, once it has
        self.warn = warn or (lambda text: log.warning("%s", text))  # told of the one failure, in a line
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._size = 0
        self._message_count = 0
        self._last_role: str | None = None

    @property
    def path(self) -> Path:
        return self.sessions_dir / f"{self.session_id}{TRANSCRIPT_SUFFIX}"

    @classmethod
    def continuing(
        cls, path: Path, *, model: str, cwd: str | os.PathLike[str], project: str | os.PathLike[str],
        warn: Callable[[str], None] | None = None, fd: int | None = None,
    ) -> TranscriptWriter:  # fmt: skip
        """Append to the existing transcript at `path` (a resumed session; `fd`: its descriptor,
        open and locked already, for a copy just made). Raises SessionInUse when another
        mini-claude has it open; any other failure is reported through `warn`."""
        writer = cls(path.parent, cwd=cwd, project=project, model=model, warn=warn, session_id=path.stem)
        try:
            writer._fd, writer._size, writer._message_count, writer._last_role = reopen_transcript(path, fd)
        except (OSError, SessionsFolderError) as error:  # SessionInUse goes to the caller
            writer._stop(f"Session not saved: cannot append to {visible_path(str(path))}: {_reason(error)}")
        return writer

    # -- records ---------------------------------------------------------------------------------

    def add(self, kind: str, content: list[Block]) -> None:
        """Blocks added to the conversation: kind is "user", "assistant", "tool_results" or "notice"
        (see records.RECORD_ROLES); use add_memories for recalled memories."""
        if kind not in RECORD_ROLES or kind == "memories":
            raise ValueError(f"not a content record kind: {kind!r}")
        self._append(kind, {"content": content})

    def add_memories(self, content: list[Block], file_names: list[str]) -> None:
        """Recalled-memory reminders; the file names let a resumed session skip recalling them again."""
        self._append("memories", {"files": list(file_names), "content": content})

    def add_compaction(self, summary: list[Block], replaced: int, focus: str | None = None) -> None:
        """A summary standing for the first `replaced` messages of the conversation from now on."""
        self._append(COMPACTION_TYPE, {"replaced": replaced, "focus": focus, "content": summary})

    def add_subagent(self, session_id: str, agent: str, tool_use_id: str) -> None:
        """A sub-agent's transcript (`session_id`, in the `subagents` folder beside this one) belongs here."""
        self._append(SUBAGENT_TYPE, {"session_id": session_id, "agent": agent, "tool_use_id": tool_use_id})

    def add_checkpoint(self, fields: dict[str, object]) -> None:
        """A file's content kept before a file tool changed it (checkpoints/file_checkpoints.py)."""
        self._append(CHECKPOINT_TYPE, fields)

    def note_settings(self, *, model: str | None = None, cwd: str | os.PathLike[str] | None = None) -> None:
        """The model or working directory changed (before the first record: goes into the header)."""
        changes = {key: os.fspath(value) for key, value in (("model", model), ("cwd", cwd)) if value}
        with self._lock:
            if self._fd is None and self.stopped is None and self._size == 0:
                self.model, self.cwd = changes.get("model", self.model), changes.get("cwd", self.cwd)
                return
        if changes:
            self._append(SETTINGS_TYPE, changes)

    def close(self) -> None:
        """Make the transcript durable (fsync) and release it; later records are not saved."""
        with self._lock:
            fd, self._fd = self._fd, None
            if self.stopped is None:
                self.stopped = "closed"
        if fd is not None:
            with contextlib.suppress(OSError):
                os.fsync(fd)
            os.close(fd)

    # -- writing ---------------------------------------------------------------------------------

    def _append(self, kind: str, fields: dict[str, Any]) -> None:
        warning = None
        with self._lock:
            if self.stopped is not None:
                return
            role = RECORD_ROLES.get(kind)
            count = self._message_count + (1 if role is not None and role != self._last_role else 0)
            record = {"type": kind, "n": count, "at": now_iso(), **fields}
            try:
                line = encode_line(record)
                if self._fd is None:
                    self._create()
                if self._size == 0:  # with the first record, in one write: no header-only files
                    line = self._header_line() + line
                if self._size + len(line) > MAX_TRANSCRIPT_BYTES:
                    raise _Full()
                self._write(line)
            except _Full:
                warning = (
                    f"Session transcript {visible_path(str(self.path))} reached the "
                    f"{MAX_TRANSCRIPT_BYTES // 2**20} MB limit: not saved from here on "
                    "(/clear starts a new one; the conversation goes on)"
                )
            except SessionsFolderError as error:
                warning = f"Session not saved: {error} (the conversation goes on)"
            except OSError as error:
                verb = "write" if self._fd is not None else "create"
                warning = (
                    f"Session not saved from here on: cannot {verb} {visible_path(str(self.path))}: "
                    f"{_reason(error)} (the conversation goes on)"
                )
            except (TypeError, ValueError, RecursionError) as error:  # content that is not JSON: our bug
                log.exception("transcript record not encodable")
                warning = f"Session not saved from here on: a {kind} record could not be written ({error})"
            else:
                self._message_count, self._last_role = count, role or self._last_role
            if warning is not None:
                self._stop_locked(warning)
        if warning is not None:
            self._report(warning)

    def _create(self) -> None:
        """Create the file (sessions_folder.create_transcript: 0600, new, locked)."""
        for attempt in range(ID_ATTEMPTS):
            try:
                self._fd = create_transcript(self.sessions_dir, self.path.name)
                return
            except FileExistsError:
                if attempt == ID_ATTEMPTS - 1:
                    raise
                self.session_id = new_session_id()

    def _header_line(self) -> bytes:
        header = header_record(
            self.session_id, started=self.started, cwd=self.cwd, project=self.project,
            model=self.model, version=__version__,
        )  # fmt: skip
        if self.print_mode:
            header[PRINT_MODE_KEY] = True
        if self.copied_from:
            header["copied_from"] = self.copied_from
        return encode_line(header)

    def _write(self, line: bytes) -> None:
        assert self._fd is not None
        write_all(self._fd, line)
        self._size += len(line)

    def _stop(self, warning: str) -> None:
        with self._lock:
            self._stop_locked(warning)
        self._report(warning)

    def _report(self, warning: str) -> None:
        try:
            self.warn(warning)
        except Exception:  # the UI's callback failing must not end the turn either
            log.exception("reporting a transcript warning failed: %s", warning)

    def _stop_locked(self, warning: str) -> None:
        self.stopped = warning
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


class _Full(Exception):
    pass


def _reason(error: Exception) -> str:
    if isinstance(error, OSError) and error.errno == errno.ELOOP:
        return "it is a symlink, and transcripts are never written through one"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error)
