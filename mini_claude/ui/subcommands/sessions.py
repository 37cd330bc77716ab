"""`mini-claude sessions list`: this project's saved sessions, newest first, one per line.

Columns, separated by two spaces: the session id, when it was last used (ISO 8601, local time),
its message count, and its first message (one line, shortened, control characters written out).
A transcript that cannot be resumed shows `-` as its count and the reason instead of a message;
`?` is a count not known without reading the whole file (a hand-edited one with a huge last line).
"""

from __future__ import annotations

import datetime as dt
import sys

from mini_claude.core.config import Settings, memory_project_root
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import visible_text
from mini_claude.sessions.catalog import SessionSummary, list_sessions
from mini_claude.sessions.transcript.sessions_folder import SessionsFolderError

FIRST_MESSAGE_MAX_CHARS = 80
COUNT_WIDTH = 5


def run_sessions_command(settings: Settings) -> int:
    """`mini-claude sessions [list]`: list is the one action argparse allows."""
    try:
        sessions = list_sessions(settings.sessions_dir)
    except SessionsFolderError as error:
        print(f"mini-claude: {error}", file=sys.stderr)
        return 1
    if not sessions:
        root = visible_path(str(memory_project_root(settings.project_dir)))
        print(f"No saved sessions for {root} (looked in {visible_path(str(settings.sessions_dir))}).")
        return 0
    print("\n".join(session_line(summary) for summary in sessions))
    return 0


def session_line(summary: SessionSummary) -> str:
    last_used = dt.datetime.fromtimestamp(summary.last_used).astimezone().isoformat(timespec="seconds")
    if summary.problem is not None:
        count, text = "-", f"(cannot be resumed: {visible_text(summary.problem)})"
    else:
        count = "?" if summary.message_count is None else str(summary.message_count)
        text = one_line(summary.title)
    return f"{summary.id}  {last_used}  {count:>{COUNT_WIDTH}}  {text}"


def one_line(text: str, max_chars: int = FIRST_MESSAGE_MAX_CHARS) -> str:
    """`text` on one line: whitespace runs (line breaks too) folded to one space, cut to
    `max_chars` with an ellipsis, then every remaining invisible character written out (`\\x1b`),
    so text from a transcript cannot act on the terminal."""
    folded = " ".join(text.split())
    if len(folded) > max_chars:
        folded = folded[: max_chars - 1].rstrip() + "…"
    return visible_text(folded)
