"""Finding the session a user means by its id or the start of it, with a clear line when there is
none: the closest ids, every match of an ambiguous prefix, or the other project it belongs to."""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import visible_text
from mini_claude.sessions.catalog import SessionSummary, summarize, transcript_entries
from mini_claude.sessions.transcript.records import TRANSCRIPT_SUFFIX, is_transcript_name, json_object
from mini_claude.sessions.transcript.sessions_folder import (
    SessionsFolderError,
    TranscriptError,
    open_sessions_dir,
    open_transcript_for_reading,
)

LIST_COMMAND = "mini-claude sessions list"
MATCHES_SHOWN = 5
CLOSEST_SHOWN = 3
ID_SHOWN_CHARS = 12  # enough to tell ids apart in a message
FIRST_MESSAGE_SHOWN_CHARS = 40
HEADER_PEEK_BYTES = 64 * 1024
_TYPED_ID = re.compile(r"[0-9a-f]{1,32}")


class SessionNotFound(LookupError):
    """No one session matches; the message says what to type instead, in one line."""


class SessionOfAMovedProject(SessionNotFound):
    """The session belongs to a project whose folder no longer exists (moved or renamed): it can
    be resumed here instead. `summary` is the session, in that project's folder."""

    def __init__(self, message: str, summary: SessionSummary) -> None:
        super().__init__(message)
        self.summary = summary


def find_session(sessions_dir: Path, query: str, *, list_command: str = LIST_COMMAND) -> SessionSummary:
    """The session whose id is `query` or starts with it. `list_command` is what the user types to
    see the ids where they are (the shell or the REPL). Raises SessionNotFound or SessionsFolderError."""
    typed = query.strip().lower().removesuffix(TRANSCRIPT_SUFFIX)
    see = f"see {list_command}"
    if not typed:
        raise SessionNotFound(f"Give a session id or its first characters ({see}).")
    if not _TYPED_ID.fullmatch(typed):
        raise SessionNotFound(
            f"{query.strip()!r} is not a session id: ids are 32 characters of 0-9 and a-f ({see})."
        )
    dir_fd = open_sessions_dir(sessions_dir, create=False)
    entries = []
    if dir_fd is not None:
        try:
            entries = transcript_entries(dir_fd)
            matches = [(name, info) for name, info in entries if name.startswith(typed)]
            if len(matches) == 1:
                return summarize(sessions_dir, dir_fd, *matches[0])
            if matches:
                shown = [summarize(sessions_dir, dir_fd, *match) for match in matches[:MATCHES_SHOWN]]
                raise SessionNotFound(_ambiguous(typed, shown, len(matches)))
        finally:
            os.close(dir_fd)
    elsewhere = _in_other_project(sessions_dir, typed)
    if elsewhere is not None:
        path, root = elsewhere
        if root is None:
            raise SessionNotFound(
                f"Session {typed} belongs to another project: {visible_path(str(path.parent))}."
            )
        if os.path.isdir(root):
            raise SessionNotFound(
                f"Session {typed} belongs to another project: {visible_path(root)}"
                " (start mini-claude there to resume it)."
            )
        summary = _summary_of(path)
        message = f"Session {typed} belongs to {visible_path(root)}, a folder that no longer exists."
        if summary is None:
            raise SessionNotFound(message)
        raise SessionOfAMovedProject(message, summary)
    ids = [name.removesuffix(TRANSCRIPT_SUFFIX) for name, _ in entries]
    if not ids:
        raise SessionNotFound(f"No session {typed}: this project has no saved sessions.")
    closest = ", ".join(session_id[:ID_SHOWN_CHARS] for session_id in closest_ids(typed, ids))
    raise SessionNotFound(f"No session {typed} in this project; the closest: {closest} ({see}).")


def closest_ids(typed: str, ids: list[str]) -> list[str]:
    """The ids most like `typed`, compared over as many characters as were typed (a typo in a
    prefix should find the id it was meant to start)."""

    def likeness(session_id: str) -> float:
        return difflib.SequenceMatcher(None, typed, session_id[: len(typed)]).ratio()

    return sorted(ids, key=lambda session_id: (-likeness(session_id), session_id))[:CLOSEST_SHOWN]


def _ambiguous(typed: str, shown: list[SessionSummary], total: int) -> str:
    parts = []
    for summary in shown:
        session_id = summary.id[: max(ID_SHOWN_CHARS, len(typed) + 4)]
        first = " ".join(summary.title.split())[:FIRST_MESSAGE_SHOWN_CHARS]
        parts.append(f"{session_id} ({visible_text(first)})" if first else session_id)
    more = f" and {total - len(shown)} more" if total > len(shown) else ""
    return f"{typed!r} matches {total} sessions: {', '.join(parts)}{more}. Type more of the id."


def _in_other_project(sessions_dir: Path, typed: str) -> tuple[Path, str | None] | None:
    """A transcript starting with `typed` in another project's folder, if there is one, and that
    project's root as its header records it (None: unknown). A look at folder names first."""
    for folder in _other_projects(sessions_dir):
        try:
            names = [n for n in os.listdir(folder) if n.startswith(typed) and is_transcript_name(n)]
        except OSError:
            continue
        if names:
            return folder / sorted(names)[0], project_root_of(folder / sorted(names)[0])
    return None


def _other_projects(sessions_dir: Path) -> list[Path]:
    """The sessions folders of the other projects (none reached through a symlink), by name."""
    projects_dir = sessions_dir.parent.parent
    try:
        projects = [entry.name for entry in os.scandir(projects_dir) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    own = sessions_dir.parent.name
    folders = [projects_dir / project / sessions_dir.name for project in sorted(projects) if project != own]
    return [folder for folder in folders if folder.is_dir() and not folder.is_symlink()]


def project_root_of(path: Path) -> str | None:
    """The project root (else the working directory) the header of the transcript at `path` records."""
    try:
        fd, _ = open_transcript_for_reading(path)
    except TranscriptError:
        return None
    try:
        head = os.pread(fd, HEADER_PEEK_BYTES, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    header = json_object(head.split(b"\n", 1)[0])
    root = (header.get("project") or header.get("cwd")) if header is not None else None
    return root if isinstance(root, str) and os.path.isabs(root) else None


def _summary_of(path: Path) -> SessionSummary | None:
    try:
        dir_fd = open_sessions_dir(path.parent, create=False)
    except SessionsFolderError:
        return None
    if dir_fd is None:
        return None
    try:
        return summarize(
            path.parent, dir_fd, path.name, os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
        )
    except OSError:
        return None
    finally:
        os.close(dir_fd)


def newest_of_a_moved_project(sessions_dir: Path) -> SessionSummary | None:
    """The newest session among other projects' whose folder no longer exists (as their headers
    record it), for a hint where this project has none: its folder was moved or renamed."""
    newest: tuple[float, Path] | None = None
    for folder in _other_projects(sessions_dir):
        try:
            dir_fd = open_sessions_dir(folder, create=False)
        except SessionsFolderError:
            continue
        if dir_fd is None:
            continue
        try:
            entries = transcript_entries(dir_fd)
        except OSError:
            entries = []
        finally:
            os.close(dir_fd)
        if not entries or (newest is not None and entries[0][1].st_mtime <= newest[0]):
            continue
        root = project_root_of(folder / entries[0][0])
        if root is not None and not os.path.isdir(root):
            newest = (entries[0][1].st_mtime, folder / entries[0][0])
    return None if newest is None else _summary_of(newest[1])
