"""Slash commands: a small registry whose descriptions drive /help and completion."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    handler: Callable[[CommandContext, str], None]
    aliases: tuple[str, ...] = field(default=())
    usage: str = ""


COMMANDS: dict[str, Command] = {}  # by name and alias


def command(name: str, description: str, *, aliases: tuple[str, ...] = (), usage: str = "") -> Callable:
    def register(handler: Callable[[CommandContext, str], None]) -> Callable[[CommandContext, str], None]:
        entry = Command(name, description, handler, aliases, usage)
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
        ctx.console.print(f"Unknown command /{name}.{hint}", markup=False, highlight=False)
        return
    entry.handler(ctx, argument.strip())


KEYS_HELP = (
    ("Enter", "send the message"),
    ("Alt+Enter, Ctrl+J", "insert a newline"),
    ("Ctrl+C", "interrupt the reply; on the prompt, clear the line (twice on an empty line: exit)"),
    ("Ctrl+D", "exit"),
    ("Up / Down", "browse history"),
)


@command("help", "Show commands and keys")
def _help(ctx: CommandContext, argument: str) -> None:
    width = max(len(f"/{c.name} {c.usage}".rstrip()) for c in visible_commands())
    lines = ["Commands:"]
    for entry in visible_commands():
        label = f"/{entry.name} {entry.usage}".rstrip()
        aliases = f" (also {', '.join('/' + a for a in entry.aliases)})" if entry.aliases else ""
        lines.append(f"  {label.ljust(width)}  {entry.description}{aliases}")
    lines.append("Keys:")
    key_width = max(len(k) for k, _ in KEYS_HELP)
    lines.extend(f"  {keys.ljust(key_width)}  {what}" for keys, what in KEYS_HELP)
    ctx.console.print("\n".join(lines), markup=False, highlight=False)


@command("clear", "Start a new conversation")
def _clear(ctx: CommandContext, argument: str) -> None:
    ctx.session.agent.clear()
    ctx.console.print("Started a new conversation.", markup=False, highlight=False)


@command("cost", "Show the tokens used this session")
def _cost(ctx: CommandContext, argument: str) -> None:
    usage = ctx.session.llm.usage_total
    ctx.console.print(
        f"Tokens this session: input {usage.input_tokens:,}, output {usage.output_tokens:,}, "
        f"cache read {usage.cache_read_tokens:,}, cache write {usage.cache_write_tokens:,}",
        markup=False,
        highlight=False,
    )


@command("model", "Show or change the model", usage="[name]")
def _model(ctx: CommandContext, argument: str) -> None:
    agent = ctx.session.agent
    if not argument:
        ctx.console.print(f"Model: {agent.model}", markup=False, highlight=False)
        return
    if any(ch.isspace() for ch in argument):
        ctx.console.print("A model name has no spaces, e.g. /model claude-sonnet-5-5", markup=False)
        return
    agent.model = argument
    ctx.console.print(f"Model set to {argument} for this session.", markup=False, highlight=False)


@command("exit", "Leave mini-claude", aliases=("quit",))
def _exit(ctx: CommandContext, argument: str) -> None:
    ctx.should_exit = True
