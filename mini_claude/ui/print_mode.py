"""Print mode: run one prompt to completion; the answer on stdout, everything else on stderr."""

from __future__ import annotations

import sys

from mini_claude.config import Settings
from mini_claude.events import Event, MemoriesRecalled, Notice, ToolFinished, ToolStarted, TurnEnded
from mini_claude.session import build_session

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class StderrReporter:
    """Everything but the answer goes to stderr, one line per tool call or notice."""

    def __init__(self) -> None:
        self._arguments: dict[str, str] = {}

    def __call__(self, event: Event) -> None:
        if isinstance(event, ToolStarted):
            self._arguments[event.tool_use_id] = event.summary
        elif isinstance(event, ToolFinished):
            mark = "✗" if event.is_error else "●"
            argument = self._arguments.pop(event.tool_use_id, "")
            print(f"{mark} {event.name}({argument}) → {event.summary}", file=sys.stderr)
        elif isinstance(event, Notice):
            print(event.text, file=sys.stderr)
        elif isinstance(event, MemoriesRecalled):
            print(
                f"recalled {len(event.file_names)} memories: {', '.join(event.file_names)}", file=sys.stderr
            )


def run_print_mode(settings: Settings, prompt: str | None) -> int:
    if prompt is None:
        prompt = "" if sys.stdin.isatty() else sys.stdin.read()
    if not prompt.strip():
        print("mini-claude: no prompt: pass one after -p or pipe it on stdin", file=sys.stderr)
        return EXIT_USAGE
    session = build_session(settings, sink=StderrReporter(), ask=None)
    session.warm_up()
    ended: TurnEnded = session.agent.run_turn(prompt)
    if ended.final_text:
        sys.stdout.write(ended.final_text.rstrip("\n") + "\n")
        sys.stdout.flush()
    if ended.reason == "interrupted":
        return EXIT_INTERRUPTED
    return EXIT_OK if ended.reason == "done" else EXIT_FAILED
