"""Print mode: run one prompt to completion; the answer on stdout, everything else on stderr.

Both streams carry outside text (the answer, tool names and arguments, server errors), so all
of it is made visible first (`ui/visible.py`): stdout and stderr are usually a terminal too."""

from __future__ import annotations

import sys

from mini_claude.config import Settings
from mini_claude.events import (
    ContextCompacted,
    Event,
    MemoriesRecalled,
    Notice,
    ToolFinished,
    ToolStarted,
    TurnEnded,
)
from mini_claude.resume import ResumeError, ResumeRequest, finish_resume, open_session, requested_session
from mini_claude.session import Session, build_session
from mini_claude.sessions.lookup import ID_SHOWN_CHARS, LIST_COMMAND
from mini_claude.ui.context_view import compaction_announcement
from mini_claude.ui.visible import visible_event
from mini_claude.untrusted import visible_lines, visible_text

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
# After the first refusal, once: nobody can answer a permission question here; what would help.
_ALWAYS_ASKED = "writes to git directories, home dotfiles and mini-claude's own settings"
PERMISSION_HINTS = {
    "ask": "use --permission-mode accept-edits to allow editing project files, "
    f"or bypass for everything but {_ALWAYS_ASKED}",
    "accept-edits": f"use --permission-mode bypass to allow everything but {_ALWAYS_ASKED}",
    "bypass": f"{_ALWAYS_ASKED} ask even in bypass; do those in the REPL",
}


class StderrReporter:
    """Everything but the answer goes to stderr, one line per tool call or notice."""

    def __init__(self, permission_mode: str = "ask") -> None:
        self._arguments: dict[str, str] = {}
        self._permission_hint: str | None = (
            f"(print mode cannot ask for permission: {PERMISSION_HINTS[permission_mode]})"
        )

    def __call__(self, event: Event) -> None:
        event = visible_event(event)
        if isinstance(event, ToolStarted):
            self._arguments[event.tool_use_id] = event.summary
        elif isinstance(event, ToolFinished):
            mark = "✗" if event.is_error else "●"
            argument = self._arguments.pop(event.tool_use_id, "")
            print(f"{mark} {event.name}({argument}) → {event.summary}", file=sys.stderr)
            # Every refusal here is a question nobody could answer (print mode has no one to ask).
            if event.denied and self._permission_hint:
                print(self._permission_hint, file=sys.stderr)
                self._permission_hint = None
        elif isinstance(event, Notice):
            print(event.text, file=sys.stderr)
        elif isinstance(event, ContextCompacted):
            print(compaction_announcement(event), file=sys.stderr)
        elif isinstance(event, MemoriesRecalled):
            print(
                f"recalled {len(event.file_names)} memories: {', '.join(event.file_names)}", file=sys.stderr
            )


def run_print_mode(settings: Settings, prompt: str | None, resume: ResumeRequest | None = None) -> int:
    resume = resume or ResumeRequest()
    if resume.pick:
        print(
            "mini-claude: -r without an id shows a list to choose from, which needs a terminal: "
            f"give the session's id (see {LIST_COMMAND})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if prompt is None:
        prompt = "" if sys.stdin.isatty() else sys.stdin.read()
    if not prompt.strip():
        print("mini-claude: no prompt: pass one after -p or pipe it on stdin", file=sys.stderr)
        return EXIT_USAGE
    session = build_session(settings, sink=StderrReporter(settings.permission_mode), ask=None)
    try:
        if resume.wanted and not _resumed(session, resume):
            return EXIT_FAILED
        session.warm_up()
        ended: TurnEnded = session.agent.run_turn(prompt)
    finally:
        session.transcript.close()
    if ended.final_text:
        sys.stdout.write(visible_lines(ended.final_text).rstrip("\n") + "\n")
        sys.stdout.flush()
    if ended.reason == "interrupted":
        return EXIT_INTERRUPTED
    return EXIT_OK if ended.reason == "done" else EXIT_FAILED


def _resumed(session: Session, request: ResumeRequest) -> bool:
    """Load the session `-c` / `-r ID` names into `session`, saying so on stderr."""
    try:
        opened = open_session(session, requested_session(session.settings, request))
        resumed = finish_resume(session, opened)
    except ResumeError as error:
        print(f"mini-claude: {visible_text(str(error))}", file=sys.stderr)
        return False
    for warning in [opened.note, *resumed.warnings]:
        if warning is not None:
            print(visible_text(warning), file=sys.stderr)
    count = len(resumed.loaded.messages)
    print(f"resumed session {resumed.session_id[:ID_SHOWN_CHARS]} ({count} messages)", file=sys.stderr)
    return True
