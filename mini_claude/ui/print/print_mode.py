"""Print mode: run one message to completion; the answer on stdout, everything else on stderr.

stdout carries the answer as text (made visible: it is usually a terminal too), or JSON
(`ui/print/json_output.py`, escaped instead). stderr carries a line per tool call, notice and retry, made
visible first (`ui/render/visible.py`), in every output format. The exit status says how the turn ended
(EXIT_CODES); a refused tool call is not an ending: as in Claude Code, the run succeeds when the
model finishes (it may have done without), and json lists the refusals in `permission_denials`."""

from __future__ import annotations

import sys
from dataclasses import replace

from mini_claude.app.invocation import invoked, prepare, run_prepared
from mini_claude.app.mentions import attach, find_mentions
from mini_claude.app.resume import ResumeError, ResumeRequest, finish_resume, open_session, requested_session
from mini_claude.app.session import Session, build_session
from mini_claude.core.config import Settings
from mini_claude.core.events import (
    ContextCompacted,
    Event,
    EventSink,
    MemoriesRecalled,
    Notice,
    Retrying,
    ToolFinished,
    ToolStarted,
    TurnEnded,
)
from mini_claude.core.untrusted import visible_lines, visible_text
from mini_claude.extensions.skills.entries import Entry
from mini_claude.sessions.lookup import ID_SHOWN_CHARS, LIST_COMMAND
from mini_claude.tools.base import count_noun
from mini_claude.tools.plan import PlanAnswer, PlanProposal
from mini_claude.ui.print.closed_stdout import StdoutClosed
from mini_claude.ui.print.print_input import InputError, gather_message
from mini_claude.ui.render.context_view import compaction_announcement
from mini_claude.ui.render.renderer import recalled_line, retry_label
from mini_claude.ui.render.visible import visible_event

EXIT_OK = 0
EXIT_FAILED = 1  # an API error, a reply that was no stream, or a bug of ours
EXIT_USAGE = 2  # as argparse: a bad flag, no prompt, unusable stdin
EXIT_TURN_CAP = 3
EXIT_MAX_TOKENS = 4
EXIT_REFUSED = 5  # the model declined (stop reason `refusal`)
EXIT_STOPPED = 6  # a hook stopped it: the prompt blocked, or `continue: false`
EXIT_SPEND_CAP = 7  # stopped at the --max-cost cap
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
EXIT_CODES = {
    "done": EXIT_OK,
    "error": EXIT_FAILED,
    "turn_cap": EXIT_TURN_CAP,
    "max_tokens": EXIT_MAX_TOKENS,
    "refused": EXIT_REFUSED,
    "spend_cap": EXIT_SPEND_CAP,
    "interrupted": EXIT_INTERRUPTED,
    "stopped": EXIT_STOPPED,
    "refused_by_user": EXIT_OK,  # nobody can refuse at a question here; kept so every ending has a code
}
# After the first refusal, once: nobody can answer a permission question here; what would help.
# Precise about run_shell: a command is not judged by the paths it touches, so bypass runs every
# command, and the always-asked writes are a rule of the file tools only.
_ALWAYS_ASKED = (
    "the file tools' writes to git directories, git hooks and included git configs, home dotfiles "
    "and mini-claude's own settings"
)
_SHELL_TOO = "run_shell included: a command is not judged by the paths it touches"
_RULES = 'allow what it needs with --allowedTools (e.g. "Bash(npm test:*)"), '
PERMISSION_HINTS = {
    "ask": f"{_RULES}use --permission-mode accept-edits to allow editing project files, "
    f"or bypass for everything ({_SHELL_TOO}) but {_ALWAYS_ASKED}",
    "accept-edits": f"{_RULES}or use --permission-mode bypass to allow everything ({_SHELL_TOO}) "
    f"but {_ALWAYS_ASKED}",
    "plan": "plan mode only reads: the plan is printed for you to run with another mode",
    "bypass": f"{_ALWAYS_ASKED} ask even in bypass; do those in the REPL",
}


class StderrReporter:
    """Everything but the answer goes to stderr, one line per tool call, notice or retry."""

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
            for line in event.detail:  # a memory saved: what, where, the change
                print(f"    {line}", file=sys.stderr)
            # Every refusal here is a question nobody could answer (print mode has no one to ask).
            if event.denied and self._permission_hint:
                print(self._permission_hint, file=sys.stderr)
                self._permission_hint = None
        elif isinstance(event, Notice):
            print(event.text, file=sys.stderr)
        elif isinstance(event, ContextCompacted):
            print(compaction_announcement(event), file=sys.stderr)
        elif isinstance(event, Retrying):
            print(retry_label(event), file=sys.stderr)
        elif isinstance(event, MemoriesRecalled):
            print(recalled_line(event.file_names), file=sys.stderr)


def run_print_mode(
    settings: Settings,
    prompt: str | None,
    resume: ResumeRequest | None = None,
    *,
    output_format: str = "text",
    partial_messages: bool = False,
) -> int:
    resume = resume or ResumeRequest()
    if resume.pick:
        print(
            "mini-claude: -r without an id shows a list to choose from, which needs a terminal: "
            f"give the session's id (see {LIST_COMMAND})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        given = gather_message(prompt, getattr(sys.stdin, "buffer", None))
    except InputError as error:
        print(f"mini-claude: {visible_text(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    for warning in given.warnings:
        print(f"mini-claude: {warning}", file=sys.stderr)
    reporter = StderrReporter(settings.permission_mode)
    output = None
    sink: EventSink = reporter
    if output_format != "text":
        from mini_claude.ui.print.json_output import JsonOutput

        output = JsonOutput(stream=output_format == "stream-json", partial=partial_messages)
        sink = _both(reporter, output)
    plan = PrintedPlan()
    session = build_session(settings, sink=sink, ask=None, present_plan=plan, print_mode=True)
    try:
        if resume.wanted and not _resumed(session, resume):
            return EXIT_FAILED
        found = invoked(session, given.message)  # `/name args`: a skill or command
        if found is None and not _attached(session, prompt):
            return EXIT_USAGE
        session.warm_up()
        session.mcp.wait_until_connected(settings.mcp.connect_timeout + 1)  # before the message
        if output is not None:  # after the servers: their tools and states are known
            output.start(session)
        ended = _answer(session, given.message, found)
    except KeyboardInterrupt:  # stdout closed before the turn began, or outside the turn's own handling
        if output is not None and output.closed:
            raise StdoutClosed from None
        return EXIT_INTERRUPTED
    finally:
        session.end("other")
    if isinstance(ended, int):
        return ended
    if plan.text is not None:  # --permission-mode plan: the plan is the answer
        ended = replace(ended, final_text=plan.text)
    exit_code = EXIT_CODES[ended.reason]
    if output is not None:
        output.finish(session, ended, exit_code)
        if output.closed:
            raise StdoutClosed
    elif ended.final_text:
        sys.stdout.write(visible_lines(ended.final_text).rstrip("\n") + "\n")
        sys.stdout.flush()
    return exit_code


def _attached(session: Session, prompt: str | None) -> bool:
    """The files the prompt mentions (`@path`, as in the REPL) go with the message; False, with a
    line on stderr for each, when one cannot (nobody here can answer a permission question).
    Only the prompt is looked at: piped stdin is data, whatever `@` it holds."""
    agent = session.agent
    mentions = find_mentions(prompt or "", agent.tool_context.project_dir)
    if not mentions:
        return True
    attached = attach(mentions, agent)
    for problem in attached.problems:
        print(f"mini-claude: {visible_text(problem)} (the prompt was not sent)", file=sys.stderr)
    if attached.problems:
        return False
    print(visible_text("Attached " + ", ".join(attached.shown)), file=sys.stderr)
    agent.add_context(attached.blocks)
    return True


def _answer(session: Session, message: str, found: tuple[Entry, str] | None) -> TurnEnded | int:
    """The turn `message` makes, or an exit status when the skill or command it runs (`found`:
    `/name`) could not be sent."""
    if found is None:
        return session.agent.run_turn(message)
    prepared = prepare(session, *found)
    for line in [*prepared.shown, *prepared.problems]:
        print(visible_text(line), file=sys.stderr)
    if prepared.problems:
        print(f"mini-claude: /{found[0].name} was not sent", file=sys.stderr)
        return EXIT_FAILED
    return run_prepared(session, prepared, session.agent.run_turn)


class PrintedPlan:
    """exit_plan_mode in print mode: nobody can approve, so the plan becomes the printed answer
    and the turn ends there (exit 0), without changing anything."""

    def __init__(self) -> None:
        self.text: str | None = None

    def __call__(self, proposal: PlanProposal) -> PlanAnswer:
        self.text = proposal.plan
        return PlanAnswer("printed")


def _resumed(session: Session, request: ResumeRequest) -> bool:
    """Load the session `-c` / `-r ID` names into `session`, saying so on stderr."""
    try:
        opened = open_session(session, requested_session(session.settings, request), fork=request.fork)
        resumed = finish_resume(session, opened)
    except ResumeError as error:
        print(f"mini-claude: {visible_text(str(error))}", file=sys.stderr)
        return False
    for warning in [opened.note, *resumed.warnings]:
        if warning is not None:
            print(visible_text(warning), file=sys.stderr)
    count = len(resumed.loaded.messages)
    shown = f"resumed session {resumed.session_id[:ID_SHOWN_CHARS]} ({count_noun(count, 'message')})"
    print(shown, file=sys.stderr)
    return True


def _both(first: EventSink, second: EventSink) -> EventSink:
    def sink(event: Event) -> None:
        first(event)
        second(event)

    return sink
