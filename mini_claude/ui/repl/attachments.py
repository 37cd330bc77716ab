"""What a message needs before its text is sent: the MCP servers still connecting (waited for),
the files it mentions (`@path`) and the MCP resources (`@server:uri`), read when it is sent. One
that cannot be attached keeps the message back."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from mini_claude.app.mcp.resources import attach_resources, find_resource_mentions
from mini_claude.app.mentions import Attached, attach, find_mentions

if TYPE_CHECKING:
    from rich.console import Console

    from mini_claude.app.session import Session


def attachments(
    text: str,
    session: Session,
    console: Console,
    interruptible: Callable[[Callable[[], Attached]], Attached | None],
) -> list[dict[str, Any]] | None:
    """The blocks to send before `text` ([] when it mentions nothing); None when the message
    must not go (a mention could not be attached, or the user stopped the reading): each
    problem is one line on the console."""
    agent = session.agent
    mentions = find_mentions(text, agent.tool_context.project_dir)
    resources = find_resource_mentions(text, session.mcp)
    if not mentions and not resources:
        return []

    def read() -> Attached:
        found = attach(mentions, agent) if mentions else Attached()
        if resources and not found.problems:
            attach_resources(resources, session.mcp, found)
        return found

    attached = interruptible(read)
    if attached is None or attached.problems:
        for problem in attached.problems if attached else []:
            console.print(problem, style="red", markup=False)
        return None
    console.print("Attached " + ", ".join(attached.shown), style="dim", highlight=False)
    return attached.blocks


def wait_for_servers(
    session: Session, console: Console, watching: Callable[[], AbstractContextManager[object]]
) -> None:
    """A message sent while MCP servers still connect waits for them (their tools may be what it
    asks for); Esc (`watching` turns it into KeyboardInterrupt) sends it without them."""
    waiting = session.mcp.connecting()
    if not waiting:
        return
    servers = f"server{'s' if len(waiting) > 1 else ''} {', '.join(waiting)}"
    console.print(f"Waiting for MCP {servers} to connect (Esc: send without)…", style="dim", markup=False)
    with contextlib.suppress(KeyboardInterrupt), watching():
        session.mcp.wait_until_connected(session.settings.mcp.connect_timeout + 1)
