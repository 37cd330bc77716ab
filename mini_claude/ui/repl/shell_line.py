"""`!command` at the prompt: the user runs a shell command themselves, as in Claude Code's bash
mode. No permission question (the user typed it; only the prompt can start one), the same
folder, deadline and output cap as the run_shell tool (`tools/shell.py` runs it). The output is
shown, and goes with the next message as context the model reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.untrusted import wrap
from mini_claude.tools.shell import run_user_command

if TYPE_CHECKING:
    from rich.console import Console

    from mini_claude.app.session import Session

SHOWN_OUTPUT_LINES = 40  # on screen: the last lines of a long output (the model gets all of it)
OUTPUT_TAG = "shell-output"


def run_shell_line(command: str, session: Session, console: Console) -> None:
    """Run `command` (what followed the `!`); KeyboardInterrupt (Esc, Ctrl+C) stops it."""
    agent = session.agent
    if not command.strip():
        console.print("Type a command after the !, e.g. !git status", style="red", highlight=False)
        return
    try:
        result = run_user_command(agent.tool_context, command)
    except ToolError as error:  # the shell could not start
        console.print(str(error), style="red", highlight=False)
        return
    output = result.content
    lines = output.split("\n")
    if len(lines) > SHOWN_OUTPUT_LINES:
        left_out = len(lines) - SHOWN_OUTPUT_LINES
        console.print(f"… {left_out:,} lines above not shown here", style="dim", highlight=False)
        output = "\n".join(lines[-SHOWN_OUTPUT_LINES:])
    console.print(output, highlight=False)  # the console makes it visible (VisibleConsole)
    block = wrap(OUTPUT_TAG, f"$ {command}\n{result.content}")
    agent.add_context([{"type": "text", "text": _fill("shell_output", output=block)}])
    mark = "✗" if result.is_error else "●"
    line = f"{mark} !{_first_line(command)} → {result.summary} (the output goes with your next message)"
    console.print(line, style="dim", highlight=False)


def _fill(key: str, **values: object) -> str:
    return prompts.fill(prompts.load_toml("prompt_input.toml")[key].strip(), **values)


def _first_line(command: str) -> str:
    lines = command.strip().splitlines()
    return lines[0] + (" …" if len(lines) > 1 else "") if lines else ""
