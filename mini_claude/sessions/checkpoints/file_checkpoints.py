"""Checkpoints: before a file tool changes a file, the content it had is kept for the session (once
per file per user message), so `/rewind` can put the code back as it was before any message.

The content goes beside the transcript (`side_files.py`) and a `checkpoint` record into it (which
turn, which file, which content, or that the file did not exist yet), so a resumed session can
rewind too, and checkpoints go when the transcript goes. Keeping one never stops the change: a
file too large or unreadable is recorded as not kept, and a rewind says so.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core.files.safe_read import read_bytes
from mini_claude.sessions.checkpoints.side_files import SideFileError, keep_content
from mini_claude.sessions.transcript.sessions_folder import SessionsFolderError

MAX_KEPT_BYTES = 16 * 2**20  # a larger file is changed all the same, but cannot be rewound

log = logging.getLogger("mini_claude.sessions")


@dataclass(frozen=True)
class Checkpoint:
    turn: int  # the user message (from 0) before whose changes the file had this content
    path: str  # resolved, as the file tool wrote it
    digest: str | None  # the content kept (side_files); None: the file did not exist
    problem: str = ""  # why its content was not kept ("": it was)

    def record(self) -> dict[str, object]:
        return {"turn": self.turn, "path": self.path, "digest": self.digest, "problem": self.problem}


def checkpoint_from_record(record: dict[str, object]) -> Checkpoint | None:
    turn, path, digest, problem = (record.get(key) for key in ("turn", "path", "digest", "problem"))
    if type(turn) is not int or turn < 0 or not isinstance(path, str) or not path:
        return None
    if digest is not None and not isinstance(digest, str):
        return None
    return Checkpoint(turn, path, digest, problem if isinstance(problem, str) else "")


class FileCheckpoints:
    """The checkpoints of the conversation in progress."""

    def __init__(self) -> None:
        self.kept: list[Checkpoint] = []
        self.turn = -1  # no user message yet
        self._this_turn: set[str] = set()

    def new_turn(self) -> None:
        self.turn += 1
        self._this_turn.clear()

    def continue_with(self, kept: list[Checkpoint], turns: int) -> None:
        """A conversation resumed or rewound: its checkpoints, and how many user messages it has."""
        self.kept, self.turn = list(kept), turns - 1
        self._this_turn.clear()

    def take(self, path: Path, sessions_dir: Path, session_id: str) -> Checkpoint | None:
        """Keep what `path` holds before it changes; the new checkpoint, or None when this turn has
        one of that file already (its content before the turn is what a rewind restores)."""
        key = os.fspath(path)
        if key in self._this_turn or self.turn < 0:
            return None
        self._this_turn.add(key)
        try:
            digest, problem = _keep(path, sessions_dir, session_id)
        except (OSError, SideFileError, SessionsFolderError) as error:
            log.warning("checkpoint of %s not kept: %s", key, error)
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            digest, problem = None, f"its content could not be kept ({reason})"
        checkpoint = Checkpoint(self.turn, key, digest, problem)
        self.kept.append(checkpoint)
        return checkpoint

    def before(self, turn: int) -> list[Checkpoint]:
        """For each file changed from `turn` on, the checkpoint holding its content before it."""
        first: dict[str, Checkpoint] = {}
        for checkpoint in self.kept:
            if checkpoint.turn >= turn:
                first.setdefault(checkpoint.path, checkpoint)
        return list(first.values())

    def files_changed(self, turn: int) -> int:
        return len({checkpoint.path for checkpoint in self.kept if checkpoint.turn == turn})


def _keep(path: Path, sessions_dir: Path, session_id: str) -> tuple[str | None, str]:
    try:  # a regular file only (a FIFO does not block), never through a symlink swapped in
        data, too_large, size = read_bytes(path, path.parent, MAX_KEPT_BYTES, follow_symlink=False)
    except FileNotFoundError:
        return None, ""  # a new file: rewinding removes it
    if too_large:
        return None, f"{size / 2**20:.0f} MB, more than the {MAX_KEPT_BYTES // 2**20} MB a checkpoint keeps"
    return keep_content(sessions_dir, session_id, data), ""
