"""Which of a project's MCP servers may start. A server of `.mcp.json` runs a command the
repository chose, so it starts only in a trusted folder, and only once the user has approved it
(one key, its command line shown): the answer is remembered for the project, for that entry as
written, in ~/.mini-claude/mcp-approvals.json. A changed entry (another command, argument,
variable, address) asks again. Claude Code's settings keys count too: `enabledMcpjsonServers`
and `enableAllProjectMcpServers` approve (from a trusted folder's files), `disabledMcpjsonServers`
refuses."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

from mini_claude.app.settings.trust import AnswersFile, folder_key
from mini_claude.core.config import Settings, app_home
from mini_claude.core.files.safe_read import UnreadableFile
from mini_claude.tools.mcp.config import ServerConfig

APPROVALS_FILE = "mcp-approvals.json"
Decision = Literal["approved", "refused", "ask"]


class ApprovalStore(AnswersFile):
    """The user's answers, by project root and server, each for one fingerprint of its entry."""

    def __init__(self, home: Path | None = None) -> None:
        super().__init__(home or app_home(), APPROVALS_FILE, "projects")
        self.problem: str | None = None  # one line when the file could not be read

    def answer(self, root: Path, server: ServerConfig) -> bool | None:
        """True or False when the user answered for this entry as it is written now, else None."""
        try:
            servers = self.read().get(folder_key(root))
        except UnreadableFile as error:  # everything asks again
            self.problem = f"{error}; the project's MCP servers ask again"
            return None
        entry = servers.get(server.name) if isinstance(servers, dict) else None
        if not isinstance(entry, dict) or entry.get("fingerprint") != server.fingerprint():
            return None
        approved = entry.get("approved")
        return approved if isinstance(approved, bool) else None

    def remember(self, root: Path, server: ServerConfig, approved: bool) -> None:
        """Keep the answer; OSError when it cannot be kept."""
        answer = {
            "approved": approved,
            "fingerprint": server.fingerprint(),
            "command": server.command_line,
            "answered": dt.datetime.now().astimezone().isoformat(),
        }

        def change(projects: dict[str, Any]) -> None:
            servers = projects.get(key := folder_key(root))
            projects[key] = {**(servers if isinstance(servers, dict) else {}), server.name: answer}

        self.change(change)


def decision(server: ServerConfig, settings: Settings, store: ApprovalStore, root: Path) -> Decision:
    """Whether a project server may start now, must not, or waits for the user's answer. A
    user's own server (`~/.mini-claude/mcp.json`) always may."""
    if server.scope == "user":
        return "approved"
    if not settings.folder_trusted or server.name in settings.mcp.disabled:
        return "refused"
    if settings.mcp.enable_all or server.name in settings.mcp.enabled:
        return "approved"
    answered = store.answer(root, server)
    if answered is None:
        return "ask"
    return "approved" if answered else "refused"
