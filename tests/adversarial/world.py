"""What the adversarial tests share: snapshots that show nothing on disk changed, and ways to
drive a session against the fake model server into a fault."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mini_claude.core import config
from tests.fake_api import FakeAnthropic
from tests.kit import main_calls, tool_results_in


def snapshot(root: Path) -> dict[str, object]:
    """Every entry below `root`: file bytes, a symlink's target, a FIFO as such (nothing followed).
    A folder that cannot be listed is left out, as `os.walk` would."""
    state: dict[str, object] = {}

    def visit(folder: str, prefix: str) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_symlink():
                state[rel] = ("link", os.readlink(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                state[rel] = "dir"
                visit(entry.path, rel + os.sep)
            elif entry.is_file(follow_symlinks=False):
                size = entry.stat(follow_symlinks=False).st_size
                state[rel] = Path(entry.path).read_bytes() if size < 1 << 20 else ("large file", size)
            else:
                state[rel] = "special"

    visit(str(root), "")
    return state


def snapshot_but_transcripts(root: Path) -> dict[str, object]:
    """`snapshot(root)` without this project's session transcripts and `project.json` (whose
    project and repository its folder is kept for), which every session writes."""
    sessions, record = config.project_sessions_dir(), config.project_state_dir() / "project.json"
    return {
        rel: state
        for rel, state in snapshot(root).items()
        if not (root / rel).is_relative_to(sessions) and root / rel != record
    }


# --- a whole session against the fake model server ---------------------------------------------------


def last_tool_result(fake: FakeAnthropic) -> dict[str, Any]:
    [result] = tool_results_in(main_calls(fake)[-1])
    return result
