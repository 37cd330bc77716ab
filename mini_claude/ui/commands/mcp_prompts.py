"""`/mcp__server__prompt args`: an MCP server's prompt, fetched with the arguments given and
sent as the next message (as Claude Code does); completed with the prompts' descriptions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import Completion

from mini_claude.app.mcp.resources import prompt_arguments, prompt_commands
from mini_claude.core.untrusted import visible_text
from mini_claude.tools.mcp import results
from mini_claude.ui.commands.registry import DYNAMIC_COMMANDS, CommandContext

if TYPE_CHECKING:
    from mini_claude.app.session import Session

GET_TIMEOUT_S = 30.0
DESCRIPTION_CHARS = 80


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
        ctx.console.print("Interrupted.", style="dim", markup=False)
        return True
    except Exception as error:  # missing arguments, the server's refusal: one line, made visible
        ctx.console.print(f"/{name}: {visible_text(str(error) or type(error).__name__)[:300]}",
                          style="red", markup=False, highlight=False)  # fmt: skip
        return True
    text = results.prompt_text(result, server, str(prompt.name))
    ctx.console.print(f"Sending the prompt {prompt.name} of {server}…", style="dim", markup=False)
    if ctx.run_turn is not None:
        ctx.run_turn(text)
    return True


def prompt_completions(session: Session, typed: str) -> Iterator[Completion]:
    for command, (server, prompt) in prompt_commands(session.mcp).items():
        if command.startswith(typed):
            about = visible_text(" ".join(str(prompt.description or f"a prompt of {server}").split()))
            yield Completion(f"/{command}", start_position=-len(typed) - 1,
                             display_meta=about[:DESCRIPTION_CHARS])  # fmt: skip


DYNAMIC_COMMANDS.append((run_prompt, prompt_completions))
