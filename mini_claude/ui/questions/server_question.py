"""The question before a project's MCP server first starts: what it runs (or where it
connects), from which file, then one key. `y` starts it, `n` never does (both remembered for
this entry as written); Esc, Ctrl+C and Ctrl+D decide nothing: it does not start now and the
next start asks again. Keys typed before the question appeared are dropped."""

from __future__ import annotations

from mini_claude.tools.mcp.config import ServerConfig
from mini_claude.ui.questions.trust_question import yes_no_or_not_now

ANSWERS = {"y": ("yes", "start it"), "n": ("no", "never")}
MAX_SHOWN = 20  # environment variables or headers; the rest are counted


def ask_server(server: ServerConfig, *, plain: bool) -> bool | None:
    """True: start `server` (now and from now on); False: never; None: not now."""
    if server.transport == "stdio":
        what = [f"  runs: {server.command_line}"]
        named = [f"{name}={value}" for name, value in server.env.items()]
        extra = ("with environment", named)
    else:
        what = [f"  connects to: {server.command_line} ({server.transport})"]
        extra = ("with headers", list(server.headers))  # names only: values are often secrets
    lines = [f"{server.source} (this project) has an MCP server, {server.name}:", *what]
    if extra[1]:
        shown = ", ".join(extra[1][:MAX_SHOWN]) + (
            f" and {len(extra[1]) - MAX_SHOWN} more" if len(extra[1]) > MAX_SHOWN else ""
        )
        lines.append(f"  {extra[0]}: {shown}")
    lines.append("It runs with your rights, as any command does. [y]es, [n]o, Esc: not now")
    return yes_no_or_not_now(lines, "Start it? ", ANSWERS, plain)
