"""Slash commands: a small registry whose descriptions drive /help and completion."""

from __future__ import annotations

import difflib
import textwrap
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from mini_claude.untrusted import visible_text

if TYPE_CHECKING:
    from rich.console import Console

    from mini_claude.session import Session
    from mini_claude.ui.render import Renderer


@dataclass
class CommandContext:
    console: Console
    session: Session
    renderer: Renderer
    confirm: Callable[[str], bool]  # asks the user a yes/no question
    should_exit: bool = False
    pending: threading.Thread | None = None  # work the next input waits for (a session resuming)


# Completes what follows `/name `: given the session and that text (up to the cursor), it yields
# completions whose start_position counts back from the cursor.
ArgumentCompleter = Callable[["Session", str], Iterable[Completion]]


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    handler: Callable[[CommandContext, str], None]
    aliases: tuple[str, ...] = field(default=())
    usage: str = ""
    complete: ArgumentCompleter | None = None


COMMANDS: dict[str, Command] = {}  # by name and alias


def command(
    name: str,
    description: str,
    *,
    aliases: tuple[str, ...] = (),
    usage: str = "",
    complete: ArgumentCompleter | None = None,
) -> Callable:
    def register(handler: Callable[[CommandContext, str], None]) -> Callable[[CommandContext, str], None]:
        entry = Command(name, description, handler, aliases, usage, complete)
        for key in (name, *aliases):
            COMMANDS[key] = entry
        return handler

    return register


def visible_commands() -> list[Command]:
    """Each command once, in registration order."""
    seen: dict[str, Command] = {}
    for entry in COMMANDS.values():
        seen.setdefault(entry.name, entry)
    return list(seen.values())


def dispatch(line: str, ctx: CommandContext) -> None:
    """Run `/name args`; an unknown name gets one line naming the closest match."""
    name, _, argument = line.strip().removeprefix("/").partition(" ")
    entry = COMMANDS.get(name.lower())
    if entry is None:
        close = difflib.get_close_matches(name.lower(), list(COMMANDS), n=1, cutoff=0.4)
        hint = f" Did you mean /{close[0]}?" if close else " Type /help for the list."
        ctx.console.print(f"Unknown command /{visible_text(name)}.{hint}", markup=False, highlight=False)
        return
    entry.handler(ctx, argument.strip())


class CommandCompleter(Completer):
    """Completes `/command` names at the start of the input, then each command's arguments (for
    commands that register a completer), with their descriptions."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        name, space, argument = text[1:].partition(" ")
        if space:
            entry = COMMANDS.get(name.lower())
            if entry is not None and entry.complete is not None:
                yield from entry.complete(self.session, argument)
            return
        for entry in visible_commands():
            for candidate in (entry.name, *entry.aliases):
                if candidate.startswith(name):
                    yield Completion(
                        "/" + candidate, start_position=-len(text), display_meta=entry.description
                    )


KEYS_HELP = (
    ("Enter", "send the message"),
    ("Alt+Enter, Ctrl+J", "insert a newline"),
    ("Ctrl+C", "interrupt the reply; on the prompt, clear the line (twice on an empty line: exit)"),
    ("Ctrl+D", "exit"),
    ("Up / Down", "browse history"),
)


HELP_INDENT = 2
HELP_GAP = 2  # spaces between a label and its description
HELP_LABEL_MAX_CHARS = 24  # a longer label gets a line to itself, its description below it
HELP_DESCRIPTION_MIN_CHARS = 16  # a narrower description column: every description goes below its label
HELP_STACKED_INDENT = 6  # where descriptions start when they go below their labels


def help_lines(width: int) -> list[str]:
    """/help as two columns fitted to `width`: each description wraps under its own column."""
    commands = []
    for entry in visible_commands():
        aliases = f" (also {', '.join('/' + a for a in entry.aliases)})" if entry.aliases else ""
        commands.append((f"/{entry.name} {entry.usage}".rstrip(), entry.description + aliases))
    sections = {"Commands:": commands, "Keys:": list(KEYS_HELP)}
    labels = [label for rows in sections.values() for label, _ in rows]
    label_width = max((len(label) for label in labels if len(label) <= HELP_LABEL_MAX_CHARS), default=0)
    column = HELP_INDENT + label_width + HELP_GAP
    side_by_side = width - column >= HELP_DESCRIPTION_MIN_CHARS
    if not side_by_side:
        column = HELP_STACKED_INDENT
    lines = []
    for heading, rows in sections.items():
        lines.append(heading)
        for label, description in rows:
            wrapped = textwrap.wrap(description, max(width - column, 1), break_on_hyphens=False)
            if side_by_side and len(label) <= label_width:
                first = wrapped.pop(0) if wrapped else ""
                lines.append((" " * HELP_INDENT + label.ljust(label_width + HELP_GAP) + first).rstrip())
            else:
                indent = " " * HELP_INDENT
                lines.extend(
                    textwrap.wrap(
                        label, max(width, HELP_INDENT + 3), initial_indent=indent,
                        subsequent_indent=indent + "  ", break_on_hyphens=False,
                    )
                )  # fmt: skip
            lines.extend(" " * column + part for part in wrapped)
    return lines


@command("help", "Show commands and keys")
def _help(ctx: CommandContext, argument: str) -> None:
    # Fitted to the width already: rich must not wrap it again (plain mode would not wrap at all,
    # and the terminal would then break lines mid-word at column 0).
    ctx.console.print("\n".join(help_lines(ctx.console.width)), markup=False, highlight=False, soft_wrap=True)


@command("clear", "Start a new conversation")
def _clear(ctx: CommandContext, argument: str) -> None:
    ctx.session.new_conversation()
    ctx.console.print("Started a new conversation.", markup=False, highlight=False)


@command("cost", "Show the tokens used this session")
def _cost(ctx: CommandContext, argument: str) -> None:
    llm = ctx.session.llm
    usage, side = llm.usage_total, llm.side_usage_total
    lines = [
        f"Tokens this session: input {usage.input_tokens:,}, output {usage.output_tokens:,}, "
        f"cache read {usage.cache_read_tokens:,}, cache write {usage.cache_write_tokens:,}"
    ]
    if llm.side_queries:
        noun = "side query" if llm.side_queries == 1 else "side queries"
        lines.append(
            f"Memory recall: {llm.side_queries:,} {noun}, input {side.input_tokens:,}, "
            f"output {side.output_tokens:,} (not counted above)"
        )
    ctx.console.print("\n".join(lines), markup=False, highlight=False)


@command("model", "Show or change the model", usage="[name]")
def _model(ctx: CommandContext, argument: str) -> None:
    agent = ctx.session.agent
    if not argument:
        ctx.console.print(f"Model: {visible_text(agent.model)}", markup=False, highlight=False)
        return
    if any(ch.isspace() for ch in argument):
        ctx.console.print("A model name has no spaces, e.g. /model claude-sonnet-5-5", markup=False)
        return
    agent.model = argument
    ctx.session.transcript.note_model(argument)
    ctx.console.print(
        f"Model set to {visible_text(argument)} for this session.", markup=False, highlight=False
    )


@command("exit", "Leave mini-claude", aliases=("quit",))
def _exit(ctx: CommandContext, argument: str) -> None:
    ctx.should_exit = True
