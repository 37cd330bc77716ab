"""The interactive REPL: prompt-toolkit for input, the renderer for output, the agent in between."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import merge_completers
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.patch_stdout import patch_stdout

from mini_claude import __version__
from mini_claude.app.mcp.resources import resource_uris
from mini_claude.app.resume import ResumeRequest
from mini_claude.app.session import Session, build_session
from mini_claude.core.config import Settings
from mini_claude.core.events import Notice
from mini_claude.safety.permissions import Answer, PermissionRequest
from mini_claude.tools.base import PlanAnswer, PlanProposal
from mini_claude.ui.commands import (  # noqa: F401 - register commands
    agents,
    context,
    extensions,
    init,
    mcp,
    model,
    permissions,
    status,
    think,
)
from mini_claude.ui.commands.memory import command as memory_command  # noqa: F401 - registers /memory
from mini_claude.ui.commands.model import banner
from mini_claude.ui.commands.registry import COMMANDS, CommandCompleter, CommandContext, dispatch
from mini_claude.ui.commands.sessions import resume_at_start, start_resume, wait_for_resume
from mini_claude.ui.conversation import commands as conversation_commands  # noqa: F401 - register them
from mini_claude.ui.conversation.keys import bind_conversation_keys
from mini_claude.ui.questions.key_answer import confirm_by_key
from mini_claude.ui.questions.permission_prompt import ask_permission
from mini_claude.ui.questions.plan_question import present_plan
from mini_claude.ui.questions.server_question import ask_server as ask_server_question
from mini_claude.ui.render.console import create_console, make_renderer, plain_mode_wanted
from mini_claude.ui.render.live_tail import preload_markdown
from mini_claude.ui.repl.attachments import attachments, wait_for_servers
from mini_claude.ui.repl.draft_recall import DraftRecall
from mini_claude.ui.repl.input_history import open_history
from mini_claude.ui.repl.memory_note import is_memory_note, save_memory_note
from mini_claude.ui.repl.mention_completion import MentionCompleter
from mini_claude.ui.repl.mode_line import add_mode_line, bind_mode_cycle
from mini_claude.ui.repl.shell_line import run_shell_line
from mini_claude.ui.repl.terminal_keys import (
    EXIT_HINT,
    ExitGuard,
    prompt_key_bindings,
    read_shift_enter_as_line_break,
)
from mini_claude.ui.repl.turn_keys import TurnKeys
from mini_claude.ui.repl.typeahead import (
    typeahead_passed_to_prompt,
    typeahead_set_aside,
    typeahead_unsent,
    typing_not_echoed,
)

T = TypeVar("T")
PROMPT = "> "
_COMMAND_WORD = re.compile(r"/[A-Za-z][\w:-]*(\s|$)")  # `/name`, `/namespace:name`
REFUSED_NOTE = "Not done: tell mini-claude what to do instead."
MEMORY_OFF = "Automatic memory is off (autoMemoryEnabled or MINI_CLAUDE_MEMORY): the note was not saved."


class Repl:
    def __init__(self, settings: Settings, resume: ResumeRequest | None = None) -> None:
        self.settings = settings
        self.resume = resume or ResumeRequest()
        self.plain = plain_mode_wanted(flag=settings.plain, stdout=sys.stdout)
        self.console = create_console(plain=self.plain)
        self.renderer = make_renderer(self.console, plain=self.plain)
        self.session: Session = build_session(
            settings, sink=self.renderer, ask=self.ask_permission, present_plan=self.present_plan,
            ask_server=partial(ask_server_question, plain=self.plain),
        )  # fmt: skip
        self.exit_guard = ExitGuard()
        history, self.history_warning = open_history()
        read_shift_enter_as_line_break()  # before any key is read: it arrives as Ctrl+J
        project_dir = self.session.agent.tool_context.project_dir
        mentions = MentionCompleter(project_dir, partial(resource_uris, self.session.mcp))
        completer = merge_completers([CommandCompleter(self.session), mentions])
        bindings = prompt_key_bindings(self.exit_guard)
        bind_conversation_keys(bindings, lambda: self.session)
        bind_mode_cycle(bindings, self.session.permissions.next_mode)
        self.prompt: PromptSession[str] = PromptSession(
            history=history,
            key_bindings=bindings,
            completer=completer,
            complete_while_typing=True,
            enable_open_in_editor=False,
            prompt_continuation=" " * len(PROMPT),  # a message's later lines line up with its first
            color_depth=ColorDepth.DEPTH_1_BIT if self.plain else None,  # menus without colour
        )
        add_mode_line(self.prompt, lambda: self.session.permissions.mode, plain=self.plain)
        self.prompt.default_buffer.on_text_changed += self.exit_guard.disarm
        if settings.early_recall and settings.memory_enabled and self.session.llm.configured:
            DraftRecall(self.session.recall).attach(self.prompt.default_buffer)
        mode = self.session.permissions
        self.turn_keys = TurnKeys(self.prompt.input, self.renderer.typed_changed, on_shift_tab=mode.next_mode)
        self.renderer.typed, self.renderer.mode = self.turn_keys.snapshot, lambda: mode.mode
        self.commands = CommandContext(
            self.console, self.session, self.renderer, self.confirm, send=self.send,
            run_turn=self.run_turn, interruptible=self._interruptible,
        )  # fmt: skip
        self.session.extensions.catalog.reserved = frozenset(COMMANDS)  # a built-in wins its name
        self._draft = ""  # a message that could not be sent, back in the prompt for editing

    def run(self, first_message: str | None = None) -> int:
        try:
            return self._run(first_message)
        finally:
            wait_for_resume(self.commands)
            self.session.end("prompt_input_exit")

    def _run(self, first_message: str | None) -> int:
        opened = None
        if self.resume.wanted:
            with typing_not_echoed(self.prompt.input):  # keys typed meanwhile wait for the prompt
                started = resume_at_start(self.commands, self.resume)
            if isinstance(started, int):
                return started
            opened = started
        self.console.print(
            banner(__version__, self.session.agent.model, self.settings.base_url, self.console.width),
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
            self._handle(first_message)
        while not self.commands.should_exit:
            try:
                # What start-up threads tell (a memory folder that cannot be used) shows above the
                # prompt while the user types, instead of breaking into the line being edited.
                with patch_stdout(raw=True), typeahead_passed_to_prompt(self.prompt.input):
                    text = self.prompt.prompt(PROMPT, pre_run=self._before_prompt, default=self._draft)
            except EOFError:
                break
            except KeyboardInterrupt:
                # The key as a signal between two prompts (while one runs, it is a key binding).
                action = self.exit_guard.press(bool(self.prompt.default_buffer.text))
                if action == "exit":
                    break
                if action == "arm":
                    self.console.print(EXIT_HINT, markup=False, highlight=False)
                continue
            finally:
                self._draft = ""
            self.exit_guard.disarm()
            if not text.strip():
                continue
            self._handle(text)
        return 0

    def _handle(self, text: str) -> None:
        """One input, typed or given on the command line: a command, `!shell`, `# note`, or a message."""
        wait_for_resume(self.commands, before=text)
        if _looks_like_command(text):
            dispatch(text.strip(), self.commands)
            self._draft, self.commands.draft = self.commands.draft, ""
        elif text.startswith("!"):
            run = partial(run_shell_line, text[1:], self.session, self.console, self.ask_permission)
            self._interruptible(run)
        elif is_memory_note(text) and not self.session.settings.memory_enabled:
            self.console.print(MEMORY_OFF, style="red", markup=False, highlight=False)
        elif is_memory_note(text):
            self._interruptible(partial(save_memory_note, text, self.session, self.console))
        else:
            self.send(text)

    def _before_prompt(self) -> None:
        # Only the first call starts anything: work the first message needs, done while the user types.
        self.session.warm_up()
        if not self.plain:
            preload_markdown()

    def send(self, text: str) -> None:
        """`text` to the model, with the files it mentions (`@path`) attached; a mention that
        cannot be attached keeps the message back, in the prompt, with the reason."""
        wait_for_servers(self.session, self.console, self.turn_keys.watching)
        blocks = attachments(text, self.session, self.console, self._interruptible)
        if blocks is None:
            self.console.print("The message was not sent: it is back in the prompt.", style="dim")
            self._draft = text
            return
        if blocks:
            self.session.agent.add_context(blocks)
        self.run_turn(text)

    def run_turn(self, text: str) -> None:
        ended = self._interruptible(lambda: self.session.agent.run_turn(text))
        if ended is not None and ended.reason == "interrupted":
            self._interrupted()
        elif ended is not None and ended.reason == "refused_by_user":
            self.console.print(REFUSED_NOTE, style="dim", markup=False, highlight=False)

    def _interruptible(self, work: Callable[[], T]) -> T | None:
        """`work()` with Esc and Ctrl+C stopping it (then None, and it says so), keys typed
        meanwhile kept for the next prompt (after a stop, unsent even if Enter ended them)."""
        try:
            with self.turn_keys.watching():
                return work()
        except KeyboardInterrupt:  # landed outside the agent's own handling, or no agent at all
            self._interrupted()
            return None

    def _interrupted(self) -> None:
        self.renderer.interrupt()
        self.console.print("Interrupted.", style="dim", markup=False)
        typeahead_unsent(self.prompt.input)  # a message queued meanwhile waits in the prompt, unsent

    def ask_permission(self, request: PermissionRequest) -> Answer:
        # Keys typed before the question are a message for the next prompt, not its answer.
        if request.preview is not None:
            self.renderer.question_showed_change()  # its tool line will not show the change again
        with self.renderer.pause(), self.turn_keys.paused(), typeahead_set_aside(self.prompt.input):
            return ask_permission(request, self.console, plain=self.plain)

    def present_plan(self, proposal: PlanProposal) -> PlanAnswer:
        with self.renderer.pause(), self.turn_keys.paused(), typeahead_set_aside(self.prompt.input):
            return present_plan(proposal, self.console, plain=self.plain)

    def confirm(self, question: str) -> bool | None:
        """A yes/no question (`/memory rm`, `/memory tidy`), one key as a permission question is;
        None when cancelled (Esc, Ctrl+C, Ctrl+D), which a caller may treat apart from no."""
        with typeahead_set_aside(self.prompt.input):  # keys typed before it are not its answer
            return confirm_by_key(question, plain=self.plain)


def _looks_like_command(text: str) -> bool:
    """`/name [argument]` on one line; `/etc/hosts, what is this?` is a message about a path."""
    return "\n" not in text.strip() and _COMMAND_WORD.match(text.strip()) is not None


def run_repl(
    settings: Settings, resume: ResumeRequest | None = None, first_message: str | None = None
) -> int:
    return Repl(settings, resume).run(first_message)
