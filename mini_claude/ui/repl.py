"""The interactive REPL: prompt-toolkit for input, the renderer for output, the agent in between."""

from __future__ import annotations

import os
import re
import sys

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.patch_stdout import patch_stdout

from mini_claude import __version__, safe_read
from mini_claude.config import Settings, history_file
from mini_claude.events import Notice
from mini_claude.permissions import PermissionRequest
from mini_claude.resume import ResumeRequest
from mini_claude.session import Session, build_session
from mini_claude.ui import context_commands, memory_commands  # noqa: F401 - register /compact, /context, /memory
from mini_claude.ui.commands import CommandCompleter, CommandContext, dispatch
from mini_claude.ui.console import create_console, make_renderer, plain_mode_wanted
from mini_claude.ui.draft_recall import DraftRecall
from mini_claude.ui.live_tail import preload_markdown
from mini_claude.ui.permission_question import VIEW_ALL_KEY, QuestionView, question_view
from mini_claude.ui.session_commands import resume_at_start, start_resume, wait_for_resume
from mini_claude.ui.typeahead import pass_typeahead_to_prompt, typeahead_set_aside, typing_not_echoed
from mini_claude.untrusted import visible_text

PROMPT = "> "
_COMMAND_WORD = re.compile(r"/[A-Za-z][\w-]*(\s|$)")
EXIT_HINT = "Press Ctrl+C again to exit."
HISTORY_MAX_BYTES = 10_000_000  # prompt-toolkit loads it whole; years of typing stay well below


class ExitGuard:
    """Ctrl+C on the prompt clears the line; on an empty line it arms, and a second one exits."""

    def __init__(self) -> None:
        self.armed = False

    def on_ctrl_c(self, event) -> None:  # type: ignore[no-untyped-def]
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
            self.armed = False
        elif self.armed:
            event.app.exit(exception=EOFError)
        else:
            self.armed = True
            # Printed above the prompt: a bottom toolbar would need the terminal to answer CPR.
            run_in_terminal(lambda: print(EXIT_HINT))

    def disarm(self, *_: object) -> None:
        self.armed = False


def _key_bindings(exit_guard: ExitGuard) -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    @bindings.add("c-j")
    def _newline(event) -> None:  # type: ignore[no-untyped-def]
        event.current_buffer.insert_text("\n")

    bindings.add("c-c")(exit_guard.on_ctrl_c)
    return bindings


class Repl:
    def __init__(self, settings: Settings, resume: ResumeRequest | None = None) -> None:
        self.settings = settings
        self.resume = resume or ResumeRequest()
        self.plain = plain_mode_wanted(flag=settings.plain, stdout=sys.stdout)
        self.console = create_console(plain=self.plain)
        self.renderer = make_renderer(self.console, plain=self.plain)
        self.session: Session = build_session(settings, sink=self.renderer, ask=self.ask_permission)
        self.exit_guard = ExitGuard()
        history, self.history_warning = _history()
        self.prompt = PromptSession(
            history=history,
            key_bindings=_key_bindings(self.exit_guard),
            completer=CommandCompleter(self.session),
            complete_while_typing=True,
            enable_open_in_editor=False,
            prompt_continuation=" " * len(PROMPT),  # a message's later lines line up with its first
        )
        self.prompt.default_buffer.on_text_changed += self.exit_guard.disarm
        if settings.early_recall and self.session.llm.configured:
            DraftRecall(self.session.recall).attach(self.prompt.default_buffer)
        self.commands = CommandContext(self.console, self.session, self.renderer, self.confirm)

    def run(self, first_message: str | None = None) -> int:
        try:
            return self._run(first_message)
        finally:
            wait_for_resume(self.commands)
            self.session.transcript.close()

    def _run(self, first_message: str | None) -> int:
        opened = None
        if self.resume.wanted:
            with typing_not_echoed(self.prompt.input):  # keys typed meanwhile wait for the prompt
                opened = resume_at_start(self.commands, self.resume)
            if isinstance(opened, int):
                return opened
        self.console.print(
            f"mini-claude {__version__} · {visible_text(self.session.agent.model)} · /help for commands",
            style="dim",
            markup=False,
        )
        if opened is not None:
            start_resume(self.commands, opened)
        if self.history_warning is not None:
            self.renderer(Notice(self.history_warning, "warning"))
        if first_message is not None and first_message.strip():
            # `mini-claude "explain this project"`: shown as if typed, then answered as typed.
            self.console.print(f"{PROMPT}{first_message}", markup=False, highlight=False)
            self.session.warm_up()
            wait_for_resume(self.commands, before=first_message)
            if _looks_like_command(first_message):
                dispatch(first_message.strip(), self.commands)
            else:
                self.run_turn(first_message)
        while not self.commands.should_exit:
            try:
                # What start-up threads tell (a memory folder that cannot be used) shows above the
                # prompt while the user types, instead of breaking into the line being edited.
                with patch_stdout(raw=True):
                    text = self.prompt.prompt(PROMPT, pre_run=self._before_prompt)
            except EOFError:
                break
            except KeyboardInterrupt:
                continue
            self.exit_guard.disarm()
            if not text.strip():
                continue
            wait_for_resume(self.commands, before=text)
            if _looks_like_command(text):
                dispatch(text.strip(), self.commands)
                continue
            self.run_turn(text)
        return 0

    def _before_prompt(self) -> None:
        pass_typeahead_to_prompt(self.prompt.input)
        # Only the first call starts anything: work the first message needs, done while the user types.
        self.session.warm_up()
        if not self.plain:
            preload_markdown()

    def run_turn(self, text: str) -> None:
        try:
            with typing_not_echoed(self.prompt.input):
                ended = self.session.agent.run_turn(text)
        except KeyboardInterrupt:  # landed outside the agent's own handling
            ended = None
        if ended is None or ended.reason == "interrupted":
            self.renderer.interrupt()
            self.console.print("Interrupted.", style="dim", markup=False)

    def ask_permission(self, request: PermissionRequest) -> str:
        with self.renderer.pause():
            view = self.show_question(request)
            options = "[y]es, [a]lways for this tool, [n]o" if request.allow_always else "[y]es, [n]o"
            if view.hidden_lines:
                options += f", [{VIEW_ALL_KEY}]iew all"
            while True:
                try:
                    answer = self.prompt_line(f"{options}: ").strip().lower()
                except EOFError:
                    return "n"
                if answer in ("y", "yes"):
                    return "y"
                if answer in ("a", "always") and request.allow_always:
                    return "a"
                if answer in ("n", "no"):
                    return "n"
                if answer == VIEW_ALL_KEY and view.hidden_lines:
                    self.show_question(request, everything=True)

    def show_question(self, request: PermissionRequest, *, everything: bool = False) -> QuestionView:
        from rich.text import Text

        width, height = self.console.size
        view = question_view(request, width, height, everything=everything)
        rows = Text("\n").join(Text.assemble((row.gutter, "dim"), row.text) for row in view.rows)
        self.console.print(rows, soft_wrap=True)  # rows fit the width already: no second wrapping
        return view

    def confirm(self, question: str) -> bool:
        try:
            return self.prompt_line(f"{question} [y/N]: ").strip().lower() in ("y", "yes")
        except (EOFError, KeyboardInterrupt):
            return False

    def prompt_line(self, message: str) -> str:
        # A separate session: the main prompt's history and bindings are not for these answers.
        with typeahead_set_aside(self.prompt.input):
            return PromptSession().prompt(visible_text(message))


def _looks_like_command(text: str) -> bool:
    """`/name [argument]` on one line; `/etc/hosts, what is this?` is a message about a path."""
    return "\n" not in text.strip() and _COMMAND_WORD.match(text.strip()) is not None


def _history() -> tuple[FileHistory | InMemoryHistory, str | None]:
    """The input history file, and a one-line warning when it is not used.

    prompt-toolkit reads it whole at the first prompt and appends to it: it is used only when it is
    a regular file in mini-claude's data folder, under HISTORY_MAX_BYTES (a FIFO would hang the
    prompt, a symlink would leak another file into Up-arrow or get appended to)."""
    path = history_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return InMemoryHistory(), None  # an unwritable data dir costs history, not the session
    try:
        safe_read.check_file(path, path.parent, HISTORY_MAX_BYTES)
    except FileNotFoundError:
        pass  # the first session: FileHistory creates it
    except OSError as error:
        warning = f"Input history not loaded: {safe_read.describe(error)}; this session keeps it in memory"
        return InMemoryHistory(), warning
    return FileHistory(os.fspath(path)), None


def run_repl(
    settings: Settings, resume: ResumeRequest | None = None, first_message: str | None = None
) -> int:
    return Repl(settings, resume).run(first_message)
