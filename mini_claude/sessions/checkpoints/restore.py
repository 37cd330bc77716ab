"""Putting files back as a set of checkpoints kept them: each file's content written back whole
(atomically, as the file tools write), a file that did not exist then removed. What cannot be
restored is said, one line each; the others are restored all the same."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.paths import visible_path
from mini_claude.sessions.checkpoints.file_checkpoints import MAX_KEPT_BYTES, Checkpoint
from mini_claude.sessions.checkpoints.side_files import SideFileError, read_content
from mini_claude.sessions.transcript.sessions_folder import SessionsFolderError


@dataclass
class Restored:
    written: list[str] = field(default_factory=list)  # paths given their earlier content back
    removed: list[str] = field(default_factory=list)  # paths that did not exist then
    problems: list[str] = field(default_factory=list)  # one line each: a file left as it is, and why


def restore_files(checkpoints: list[Checkpoint], sessions_dir: Path, session_id: str) -> Restored:
    restored = Restored()
    for checkpoint in checkpoints:
        shown = visible_path(checkpoint.path)
        if checkpoint.problem:
            restored.problems.append(f"{shown} left as it is: {checkpoint.problem}")
            continue
        if (moved := _folder_moved(Path(checkpoint.path))) is not None:
            restored.problems.append(f"{shown} left as it is: {moved}")
            continue
        try:
            if checkpoint.digest is None:
                if _remove(Path(checkpoint.path)):
                    restored.removed.append(checkpoint.path)
                continue
            data = read_content(sessions_dir, session_id, checkpoint.digest, limit=MAX_KEPT_BYTES)
            write_atomic(Path(checkpoint.path), data)
            restored.written.append(checkpoint.path)
        except (OSError, SideFileError, SessionsFolderError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            restored.problems.append(f"{shown} left as it is: {reason}")
    return restored


def _folder_moved(path: Path) -> str | None:
    """Why the file's folder is no longer where the checkpoint saw it, or None. Paths were resolved
    when kept: a folder now missing (a moved project) is not made again, and one now reached
    through a symlink is not written through (it could lead anywhere)."""
    folder = path.parent
    if not folder.is_dir():
        return "its folder is gone"
    if os.path.realpath(folder) != os.fspath(folder):
        return "its folder is now reached through a symlink"
    return None


def _remove(path: Path) -> bool:
    """Remove the file a tool created (never a folder that is there now); False when it is gone."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "a folder is there now", str(path))
    os.unlink(path)
    return True
