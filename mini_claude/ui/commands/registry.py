"""Slash commands: a small registry whose descriptions drive /help and completion."""

from __future__ import annotations

import textwrap
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from mini_claude.core.untrusted import visible_text

if TYPE_CHECKING:
    from rich.console import Console

    from mini_claude.app.session import Session
    from mini_claude.ui.render.renderer import Renderer


@dataclass
class CommandContext:
    console: Console
    session: Session
    renderer: Renderer
    confirm: Callable[[str], bool | None]  # asks a yes/no question; None: cancelled (Ctrl+C, Esc)
    should_exit: bool = False
    pending: threading.Thread | None = None  # work the next input waits for (a session resuming)
    # Sends a message to the model as if typed (interruptible, its output rendered); the REPL's.
    send: Callable[[str], None] | None = None
    # Runs a turn on exactly this text (no `@` attaching), interruptible; the REPL's (an MCP
    # server's prompt, a skill).
    run_turn: Callable[[str], None] | None = None
    # Runs work that Esc or Ctrl+C may stop (None then: it says so); the REPL's.
    interruptible: Callable[[Callable[[], Any]], Any] | None = None
    draft: str = ""  # text a command puts back in the prompt (/rewind: the message rewound to)

    def say(self, text: str, style: str = "", **options: Any) -> None:
        """A command's output: plain text (no markup, no highlighting) in `style`; the REPL's
        console makes it visible (`ui/render/console.py`)."""
        self.console.print(text, style=style, markup=False, highlight=False, **options)


# Completes what follows `/name `: given the session and that text (up to the cursor), it yields
# completions whose start_position counts back from the cursor.
ArgumentCompleter = Callable[["Session", str], Iterable[Completion]]
Handler = Callable[[CommandContext, str], None]


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    handler: Handler
    aliases: tuple[str, ...] = field(default=())
    usage: str = ""
    complete: ArgumentCompleter | None = None


COMMANDS: dict[str, Command] = {}  # by name and alias
# Runs `/name argument` (the name as typed) for a name no built-in has (the user's skills and
# commands, an MCP server's prompts); True when it did.
Fallback = Callable[[CommandContext, str, str], bool]
_FALLBACKS: list[Fallback] = []
# Those commands for completion and /help: (name, description, usage) of each.
Extra = Callable[["Session"], list[tuple[str, str, str]]]
_EXTRAS: list[Extra] = []
MIN_PREFIX_CHARS = 2  # `/me` suggests `/memory`; `/m` is too little to go on
SHORT_NAME_CHARS = 4  # up to this long, one typo away; longer, two
MAX_SUGGESTIONS = 3


def command(
    name: str,
    description: str,
    *,
    aliases: tuple[str, ...] = (),
    usage: str = "",
    complete: ArgumentCompleter | None = None,
) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        entry = Command(name, description, handler, aliases, usage, complete)
        for key in (name, *aliases):
            COMMANDS[key] = entry
        return handler

    return register


def completions(words: Iterable[str], typed: str) -> Iterator[Completion]:
    """Those of `words` that start with `typed`, each completing it (an ArgumentCompleter's part)."""
    return (Completion(word, start_position=-len(typed)) for word in words if word.startswith(typed))


def fallback(handler: Fallback) -> Fallback:
    """Register what runs a name no built-in command has."""
    _FALLBACKS.append(handler)
    return handler


def extra_commands(lister: Extra) -> Extra:
    """Register what lists further commands (for completion and /help)."""
    _EXTRAS.append(lister)
    return lister


def more_commands(session: Session) -> list[tuple[str, str, str]]:
    """The further commands of `session` (name, description, usage), for completion and /help."""
    return [item for lister in _EXTRAS for item in lister(session)]


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
    if entry is None and any(handler(ctx, name, argument.strip()) for handler in _FALLBACKS):
        return
    if entry is None:
        names = [*COMMANDS, *(extra[0] for extra in more_commands(ctx.session))]
        close = close_commands(name.lower(), names)
        hint = f" Did you mean {_either(close)}?" if close else " Type /help for the list."
        ctx.say(f"Unknown command /{visible_text(name)}.{hint}")
        return
    entry.handler(ctx, argument.strip())


def close_commands(typed: str, names: list[str]) -> list[str]:
    """The names `typed` is probably a slip for: those it starts (`/mem`), else those one typo
    away (two for names over SHORT_NAME_CHARS), a swap of two neighbours counting as one
    (`/cots`). `/compact` is four edits from `/cost`: no match, so no suggestion."""
    if len(typed) >= MIN_PREFIX_CHARS:
        starts = [name for name in names if name.startswith(typed)]
        if starts:
            return starts[:MAX_SUGGESTIONS]
    allowed = 1 if len(typed) <= SHORT_NAME_CHARS else 2
    distances = {name: _edit_distance(typed, name) for name in names}
    best = min(distances.values(), default=allowed + 1)
    if best > allowed:
        return []
    return [name for name in names if distances[name] == best][:MAX_SUGGESTIONS]


def _edit_distance(a: str, b: str) -> int:
    """Insertions, deletions, substitutions and swaps of neighbours (optimal string alignment)."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def _either(names: list[str]) -> str:
    shown = [f"/{name}" for name in names]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


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
        for candidate, description, _ in more_commands(self.session):
            if candidate.startswith(name):
                yield Completion(
                    "/" + candidate, start_position=-len(text), display_meta=visible_text(description)
                )


KEYS_HELP = (
    ("Enter", "send the message"),
    ("Alt+Enter, Ctrl+J", "insert a newline"),
    ("Shift+Enter", "a newline too, where the terminal sends it as its own key (CSI u, modifyOtherKeys)"),
    ("\\ Enter", "a backslash at the end, then Enter: a newline too"),
    ("Shift+Tab", "cycle the permission mode: default, accept-edits, plan (during a reply too)"),
    ("Esc", "interrupt the reply or the running tool; what you typed comes back to the prompt"),
    ("Esc Esc", "on an empty prompt: /rewind"),
    ("Ctrl+O", "the transcript view: every tool's input and output, thinking in full (Esc or q leaves)"),
    ("typing", "during a reply: shown under it; Enter queues a message, Up takes it back"),
    ("Ctrl+C", "interrupt the reply; on the prompt, clear the line (twice on an empty line: exit)"),
    ("Ctrl+D", "exit"),
    ("Up / Down", "browse history"),
    ("!command", "run a shell command; its output goes with your next message"),
    ("# note", "save the note as a memory"),
    ("@path", "attach a file or folder to the message (Tab completes)"),
)


HELP_INDENT = 2
HELP_GAP = 2  # spaces between a label and its description
HELP_LABEL_MAX_CHARS = 24  # a longer label gets a line to itself, its description below it
HELP_DESCRIPTION_MIN_CHARS = 16  # a narrower description column: every description goes below its label
HELP_STACKED_INDENT = 6  # where descriptions start when they go below their labels


def help_lines(width: int, more: list[tuple[str, str, str]] | None = None) -> list[str]:
    """/help as two columns fitted to `width`: each description wraps under its own column;
    `more` are the user's skills and commands (name, description, usage)."""
    commands = []
    for entry in visible_commands():
        aliases = f" (also {', '.join('/' + a for a in entry.aliases)})" if entry.aliases else ""
        commands.append((f"/{entry.name} {entry.usage}".rstrip(), entry.description + aliases))
    yours = [
        (visible_text(f"/{name} {usage}".rstrip()), visible_text(text)) for name, text, usage in more or []
    ]
    sections = {
        "Commands:": commands,
        **({"Your skills and commands:": yours} if yours else {}),
        "Keys:": list(KEYS_HELP),
    }
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
    lines = help_lines(ctx.console.width, more_commands(ctx.session))
    ctx.say("\n".join(lines), soft_wrap=True)


@command("clear", "Start a new conversation and clear the screen")
def _clear(ctx: CommandContext, argument: str) -> None:
    ctx.session.new_conversation()
    ctx.renderer.context_line.reset()
    ctx.console.clear()  # nothing in plain mode (no cursor tricks) or when output is not a terminal
    ctx.say("Started a new conversation.")


@command("cost", "Show the tokens used this session and what they cost")
def _cost(ctx: CommandContext, argument: str) -> None:
    from mini_claude.ui.commands.cost import cost_lines

    ctx.say("\n".join(cost_lines(ctx.session)))


@command("exit", "Leave mini-claude", aliases=("quit",))
def _exit(ctx: CommandContext, argument: str) -> None:
    ctx.should_exit = True
