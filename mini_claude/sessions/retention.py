"""Removing transcripts not used for a while (MINI_CLAUDE_SESSION_RETENTION_DAYS, 30 by default;
0 keeps them for ever).

Only `<id>.jsonl` regular files in the sessions folder that start with a session header (or are
empty) are removed, never through a symlink, never the session in use (`keep`), and never one
another mini-claude is writing (it holds a lock on its transcript).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.sessions.catalog import transcript_entries
from mini_claude.sessions.checkpoints.side_files import SIDE_SUFFIX, is_side_folder_name, remove_side_files
from mini_claude.sessions.transcript.records import HEADER_START, TRANSCRIPT_SUFFIX
from mini_claude.sessions.transcript.sessions_folder import READ_FLAGS, SessionsFolderError, open_sessions_dir

SECONDS_PER_DAY = 86_400


@dataclass
class RetentionReport:
    removed: list[str] = field(default_factory=list)  # session ids
    problems: list[str] = field(default_factory=list)  # one line each


def remove_expired_sessions(
    sessions_dir: Path, *, retention_days: int, keep: str | None, now: float | None = None
) -> RetentionReport:
    """Remove the transcripts last used more than `retention_days` days ago. Never raises."""
    report = RetentionReport()
    if retention_days <= 0:
        return report
    cutoff = (time.time() if now is None else now) - retention_days * SECONDS_PER_DAY
    try:
        dir_fd = open_sessions_dir(sessions_dir, create=False)
    except SessionsFolderError as error:
        report.problems.append(f"old sessions not removed: {error}")
        return report
    if dir_fd is None:
        return report
    try:
        for name, info in transcript_entries(dir_fd):
            session_id = name.removesuffix(TRANSCRIPT_SUFFIX)
            if session_id == keep or info.st_mtime >= cutoff or not stat.S_ISREG(info.st_mode):
                continue
            try:
                if _remove_if_unused(dir_fd, name, info):
                    report.removed.append(session_id)
                    remove_side_files(dir_fd, session_id)
            except OSError as error:
                report.problems.append(f"old session {session_id} not removed: {error.strerror}")
        _remove_orphaned_side_files(dir_fd, cutoff, keep, report)
    except OSError as error:
        report.problems.append(f"old sessions not removed: cannot list {sessions_dir}: {error.strerror}")
    finally:
        os.close(dir_fd)
    return report


def _remove_orphaned_side_files(
    dir_fd: int, cutoff: float, keep: str | None, report: RetentionReport
) -> None:
    """Checkpoints and a name whose transcript is gone (removed by hand, or never written), once
    they are as old as a transcript would be removed at."""
    for entry in os.listdir(dir_fd):
        session_id = entry.removesuffix(SIDE_SUFFIX)
        if not is_side_folder_name(entry) or session_id == keep:
            continue
        try:
            if _exists(session_id + TRANSCRIPT_SUFFIX, dir_fd):
                continue
            if os.stat(entry, dir_fd=dir_fd, follow_symlinks=False).st_mtime >= cutoff:
                continue
            remove_side_files(dir_fd, session_id)
        except OSError as error:
            report.problems.append(f"old checkpoints of {session_id} not removed: {error.strerror}")


def _exists(name: str, dir_fd: int) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _remove_if_unused(dir_fd: int, name: str, listed: os.stat_result) -> bool:
    fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)  # O_NOFOLLOW: a symlink swapped in is not followed
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_ino != listed.st_ino:
            return False  # replaced since it was listed: judge it next time
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # another mini-claude has it open
        if info.st_size and os.pread(fd, len(HEADER_START), 0) != HEADER_START:
            return False  # not a transcript of ours, whatever its name
        with contextlib.suppress(FileNotFoundError):
            if os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ino == info.st_ino:
                os.unlink(name, dir_fd=dir_fd)  # while holding the lock: no writer can start on it
                return True
        return False
    finally:
        os.close(fd)
