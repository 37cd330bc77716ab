"""The MCP servers of one session: the configured ones that may start (approvals.py), asked
about first where a project server is new; started in the background once the prompt is up;
their tools added to the registry; a server that fails or dies told in one line."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

from mini_claude.app.mcp.approvals import ApprovalStore, decision
from mini_claude.app.mcp.files import configured_servers
from mini_claude.core.config import Settings, git_work_tree_root
from mini_claude.core.events import EventSink, Notice
from mini_claude.tools.mcp.adapter import McpTools
from mini_claude.tools.mcp.config import ServerConfig
from mini_claude.tools.mcp.connection import ServerView
from mini_claude.tools.mcp.manager import McpManager
from mini_claude.tools.registry import ToolRegistry

# Asks whether a project's server may start: (its name, what it runs, a line each) → True, False,
# or None (not now: asked again at the next start).
AskServer = Callable[[ServerConfig], "bool | None"]
WAIT_STEP_S = 0.05


class SessionServers:
    def __init__(
        self, settings: Settings, registry: ToolRegistry, sink: EventSink, *, ask: AskServer | None,
        store: ApprovalStore | None = None,
    ) -> None:  # fmt: skip
        """`ask` (the REPL's one-key question, or None: print mode never asks) is asked before the
        session starts, once for each project server not answered for yet."""
        self.sink = sink
        project = Path(os.path.realpath(settings.project_dir))
        self.root = git_work_tree_root(project) or project
        configured = configured_servers(self.root)
        self.notes = list(configured.problems)
        # Configured servers that do not start, and why.
        self.skipped: dict[str, str] = {
            name: f"its entry: {why}" for name, why in configured.unusable.items()
        }
        store = store or ApprovalStore()
        chosen = self._chosen(list(configured.servers.values()), settings, store, ask)
        if store.problem is not None:
            self.notes.append(store.problem)
        options = settings.mcp
        self.manager = McpManager(chosen, cwd=project, connect_timeout=options.connect_timeout)
        self.tools = McpTools(
            self.manager, call_timeout=options.tool_timeout, search_after=options.search_after,
            warn=lambda line: sink(Notice(line, "warning")),
        )  # fmt: skip
        registry.add_source(self.tools)
        self.manager.subscribe(self._tell)

    def start(self, first: Callable[[], None] = lambda: None) -> None:
        """Connect every server in the background once `first()` returns (the first call only)."""
        for note in self.notes:
            self.sink(Notice(note, "warning"))
        self.notes = []
        self.manager.start(first)

    def connecting(self) -> list[str]:
        return [view.name for view in self.manager.views() if view.state == "connecting"]

    def wait_until_connected(self, limit: float) -> None:
        """Until no server is still connecting, or `limit` seconds (KeyboardInterrupt stops it)."""
        deadline = time.monotonic() + limit
        while self.connecting() and time.monotonic() < deadline:
            time.sleep(WAIT_STEP_S)

    def close(self) -> None:
        self.manager.close()

    def _chosen(
        self, servers: list[ServerConfig], settings: Settings, store: ApprovalStore, ask: AskServer | None
    ) -> list[ServerConfig]:
        chosen = []
        for server in servers:
            verdict = decision(server, settings, store, self.root)
            if verdict == "ask" and ask is not None:
                answer = ask(server)
                if answer is not None:
                    with contextlib.suppress(OSError):  # not remembered: asked again next time
                        store.remember(self.root, server, answer)
                    verdict = "approved" if answer else "refused"
            if verdict == "approved":
                chosen.append(server)
            else:
                self.skipped[server.name] = self._why_not(server, settings, verdict)
        for why, said in (
            ("not approved yet", "not approved yet (start mini-claude here in a terminal to approve them)"),
            ("the folder is not trusted", "the folder is not trusted"),
        ):
            if names := [name for name, skipped in self.skipped.items() if skipped == why]:
                self.notes.append(f"MCP servers of .mcp.json not started: {', '.join(names)}: {said}")
        return chosen

    @staticmethod
    def _why_not(server: ServerConfig, settings: Settings, verdict: str) -> str:
        if not settings.folder_trusted:
            return "the folder is not trusted"
        if server.name in settings.mcp.disabled:
            return "disabledMcpjsonServers names it"
        return "refused (remembered)" if verdict == "refused" else "not approved yet"

    def _tell(self, before: ServerView, after: ServerView) -> None:
        """One line when a server fails or dies; nothing while all is well."""
        if after.state != "failed" or before.state == "failed":
            return
        lost = len(before.tools)
        gone = f"; its {lost} tool{'s are' if lost != 1 else ' is'} gone" if lost else ""
        self.sink(
            Notice(f"MCP server {after.name} failed: {after.error}{gone} (/mcp to reconnect)", "warning")
        )
