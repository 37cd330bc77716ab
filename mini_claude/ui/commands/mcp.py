"""`/mcp`: every MCP server with its state (connected, connecting, failed with why, not
started with why), what it offers and where it is configured; `/mcp reconnect NAME` connects it
again, `/mcp tools NAME` lists its tools. And `/mcp__server__prompt args`: a server's prompt,
fetched with the arguments given and sent as the next message (as Claude Code does), completed
with the prompts' descriptions. Every text a server sent is made visible first."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import Completion

from mini_claude.app.mcp.resources import prompt_arguments, prompt_commands
from mini_claude.core.untrusted import visible_text
from mini_claude.tools.base import count_noun
from mini_claude.tools.mcp import results
from mini_claude.tools.mcp.connection import ServerView
from mini_claude.ui.commands.registry import CommandContext, command, completions, extra_commands, fallback

if TYPE_CHECKING:
    from mini_claude.app.session import Session

ACTIONS = ("reconnect", "tools")
MARKS = {"connected": "✓", "connecting": "…", "failed": "✗", "stopped": "·"}
MAX_TOOLS_SHOWN = 100
DESCRIPTION_CHARS = 100
PROMPT_DESCRIPTION_CHARS = 80
GET_TIMEOUT_S = 30.0  # for a server's prompt


def server_lines(session: Session) -> list[str]:
    servers = session.mcp
    views = servers.manager.views()
    if not views and not servers.skipped:
        return [
            "No MCP servers. Add one with `mini-claude mcp add NAME -- COMMAND [ARGS…]` (see docs/mcp.md)."
        ]
    connected = sum(view.state == "connected" for view in views)
    lines = [f"MCP servers ({connected} of {len(views) + len(servers.skipped)} connected):"]
    usable: dict[str, int] = {}
    for tool in servers.tools.tools():
        usable[tool.server] = usable.get(tool.server, 0) + 1
    lines += [_line(view, usable.get(view.name, 0)) for view in views]
    lines += [f"  · {name}  not started: {why}" for name, why in servers.skipped.items()]
    if any(view.state == "failed" for view in views):
        lines.append("/mcp reconnect NAME connects a server again.")
    return lines


def _line(view: ServerView, usable: int) -> str:
    config = view.config
    where = f"{config.transport}: {config.command_line[:80]} · {config.source}"
    if view.state == "connected":
        skipped = len(view.tools) - usable
        offers = [
            count_noun(usable, "tool") + (f" ({skipped} skipped: their schemas or names)" if skipped else "")
        ]
        offers += [count_noun(len(view.resources), "resource")] if view.resources else []
        offers += [count_noun(len(view.prompts), "prompt")] if view.prompts else []
        version = f" {view.server_version}" if view.server_version else ""
        return f"  ✓ {view.name}{version}  connected · {', '.join(offers)} · {where}"
    if view.state == "failed":
        return f"  ✗ {view.name}  failed: {view.error} · {where}"
    return f"  {MARKS[view.state]} {view.name}  {view.state} · {where}"


def tool_lines(session: Session, name: str) -> list[str]:
    view = session.mcp.manager.view(name)
    if view is None:
        return [f"No MCP server named {visible_text(name)}."]
    if view.state != "connected":
        return [f"{name} is not connected ({view.state}): /mcp reconnect {name}"]
    ours = {tool.tool: tool.name for tool in session.mcp.tools.tools() if tool.server == name}
    lines = [f"Tools of {name} ({len(view.tools)}):"]
    for listed in view.tools[:MAX_TOOLS_SHOWN]:
        text = visible_text(" ".join(str(listed.description or "").split()))
        text = text if len(text) <= DESCRIPTION_CHARS else text[: DESCRIPTION_CHARS - 1] + "…"
        shown = ours.get(listed.name) or f"{visible_text(str(listed.name))[:60]} (skipped)"
        lines.append(f"  {shown}  {text}")
    if len(view.tools) > MAX_TOOLS_SHOWN:
        lines.append(f"  … and {len(view.tools) - MAX_TOOLS_SHOWN} more")
    return lines


def _complete(session: Session, typed: str) -> Iterator[Completion]:
    action, space, name = typed.partition(" ")
    if not space:
        return completions(ACTIONS, action)
    return completions(session.mcp.manager.names if action in ACTIONS else [], name)


@command(
    "mcp",
    "MCP servers: state and errors; /mcp reconnect NAME, /mcp tools NAME",
    usage="[action]",
    complete=_complete,
)
def _mcp(ctx: CommandContext, argument: str) -> None:
    action, _, name = argument.partition(" ")
    name = name.strip()
    if not action:
        lines = server_lines(ctx.session)
    elif action in ACTIONS and not name:
        lines = [f"Which server? /mcp {action} NAME ({', '.join(ctx.session.mcp.manager.names) or 'none'})"]
    elif action == "tools":
        lines = tool_lines(ctx.session, name)
    elif action == "reconnect":
        lines = _reconnect(ctx.session, name)
    else:
        lines = [f"Unknown /mcp action {visible_text(action)!r}: /mcp, /mcp reconnect NAME, /mcp tools NAME"]
    ctx.say("\n".join(lines))


def _reconnect(session: Session, name: str) -> list[str]:
    manager = session.mcp.manager
    if name not in manager.names:
        why = session.mcp.skipped.get(name)
        return [f"{name} is not started: {why}" if why else f"No MCP server named {visible_text(name)}."]
    manager.reconnect(name)
    try:
        session.mcp.wait_until_connected(session.settings.mcp.connect_timeout + 1)
    except KeyboardInterrupt:
        return [f"{name} goes on connecting in the background: /mcp shows how it went."]
    view = manager.view(name)
    if view is not None and view.state == "connected":
        return [f"Reconnected {name}: {count_noun(len(view.tools), 'tool')}."]
    return [f"{name} did not connect: {view.error if view else 'gone'}"]


@fallback
def run_prompt(ctx: CommandContext, name: str, argument: str) -> bool:
    """Send prompt `name` if a connected server has it; False when none does."""
    found = prompt_commands(ctx.session.mcp).get(name)
    if found is None:
        return False
    server, prompt = found
    try:
        arguments = prompt_arguments(prompt, argument)
        result = ctx.session.mcp.manager.get_prompt(server, str(prompt.name), arguments, GET_TIMEOUT_S)
    except KeyboardInterrupt:
        ctx.say("Interrupted.", "dim")
        return True
    except Exception as error:  # missing arguments, the server's refusal: one line, made visible
        ctx.say(f"/{name}: {visible_text(str(error) or type(error).__name__)[:300]}", "red")
        return True
    text = results.prompt_text(result, server, str(prompt.name))
    ctx.say(f"Sending the prompt {prompt.name} of {server}…", "dim")
    if ctx.run_turn is not None:
        ctx.run_turn(text)
    return True


@extra_commands
def prompt_entries(session: Session) -> list[tuple[str, str, str]]:
    """The connected servers' prompts as commands: name, description, usage."""
    entries = []
    for name, (server, prompt) in prompt_commands(session.mcp).items():
        about = " ".join(str(prompt.description or f"a prompt of {server}").split())
        usage = " ".join(f"<{argument.name}>" for argument in prompt.arguments or [])
        entries.append((name, about[:PROMPT_DESCRIPTION_CHARS], usage))
    return entries
