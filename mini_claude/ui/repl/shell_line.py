"""`!command` at the prompt: the user runs a shell command themselves, as in Claude Code's bash
mode. No permission question for a line the user typed (only the prompt can start one), the same
folder, deadline and output cap as the run_shell tool (`tools/shell.py` runs it). The output is
shown, and goes with the next message as context the model reads.

A command of more than one line is what a paste brings (a notebook cell starting with `!`): it is
shown whole, as a permission question shows a command, and runs only after a one-key yes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.untrusted import visible_text, wrap
from mini_claude.safety.permissions import Answer, PermissionRequest
from mini_claude.tools.shell import run_user_command
from mini_claude.ui.render.visible import first_line

if TYPE_CHECKING:
    from rich.console import Console

    from mini_claude.app.session import Session

SHOWN_OUTPUT_LINES = 40  # on screen: the last lines of a long output (the model gets all of it)
OUTPUT_TAG = "shell-output"
ASKING_TOOL = "!command"  # the question reads "Allow !command to run this 3-line command?"
SEVERAL_LINES_REASON = "several lines, as a paste brings: it runs only if you meant all of them"


def run_shell_line(
    command: str, session: Session, console: Console, ask: Callable[[PermissionRequest], Answer]
) -> None:
    """Run `command` (what followed the `!`), after `ask` said yes when it has several lines;
    KeyboardInterrupt (Esc, Ctrl+C) stops it."""
    agent = session.agent
    if not command.strip():
        console.print("Type a command after the !, e.g. !git status", style="red", highlight=False)
        return
    if shell_lines(command) > 1:
        shown = visible_text(command, keep="\n\t")  # as it will run: nothing in it can hide
        request = PermissionRequest(ASKING_TOOL, "shell", shown, SEVERAL_LINES_REASON)  # no "always"
        if ask(request) != "y":
            console.print("Not run.", style="dim", highlight=False)
            return
    try:
        result = run_user_command(agent.tool_context, command)
    except ToolError as error:  # the shell could not start
        console.print(str(error), style="red", highlight=False)
        return
    output = result.text
    lines = output.split("\n")
    if len(lines) > SHOWN_OUTPUT_LINES:
        left_out = len(lines) - SHOWN_OUTPUT_LINES
        noun = "line" if left_out == 1 else "lines"
        console.print(f"… {left_out:,} {noun} above not shown here", style="dim", highlight=False)
        output = "\n".join(lines[-SHOWN_OUTPUT_LINES:])
    console.print(output, highlight=False)  # the console makes it visible (VisibleConsole)
    block = wrap(OUTPUT_TAG, f"$ {command}\n{result.text}")
    agent.add_context([{"type": "text", "text": _fill("shell_output", output=block)}])
    mark = "✗" if result.is_error else "●"
    line = f"{mark} !{first_line(command)} → {result.summary} (the output goes with your next message)"
    console.print(line, style="dim", highlight=False)


def shell_lines(command: str) -> int:
    """How many lines the shell runs: it breaks lines at line feeds only (a lone carriage return
    or U+2028 is part of a line); line breaks and blanks at the end run nothing."""
    return command.rstrip().count("\n") + 1


def _fill(key: str, **values: object) -> str:
    return prompts.fill(prompts.load_toml("prompt_input.toml")[key].strip(), **values)
