"""Which of a project's MCP servers may start. A server of `.mcp.json` runs a command the
repository chose, so it starts only in a trusted folder, and only once the user has approved it
(one key, its command line shown): the answer is remembered for the project, for that entry as
written, in ~/.mini-claude/mcp-approvals.json. A changed entry (another command, argument,
variable, address) asks again. Claude Code's settings keys count too: `enabledMcpjsonServers`
and `enableAllProjectMcpServers` approve (from a trusted folder's files), `disabledMcpjsonServers`
refuses."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Literal

from mini_claude.core.config import Settings, app_home
from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.files.private_files import FILE_MODE, foreign_entry, locked, private_folder
from mini_claude.tools.mcp.config import ServerConfig

APPROVALS_FILE = "mcp-approvals.json"
APPROVALS_LOCK = ".mcp-approvals.lock"
APPROVALS_MAX_BYTES = 4_000_000
APPROVALS_VERSION = 1
Decision = Literal["approved", "refused", "ask"]


class ApprovalStore:
    """The user's answers, by project root and server, each for one fingerprint of its entry."""

    def __init__(self, home: Path | None = None) -> None:
        self.folder = home or app_home()
        self.path = self.folder / APPROVALS_FILE
        self.problem: str | None = None  # one line when the file was someone else's, so not read

    def answer(self, root: Path, server: ServerConfig) -> bool | None:
        """True or False when the user answered for this entry as it is written now, else None."""
        entry = self._read().get(_key(root), {}).get(server.name)
        if not isinstance(entry, dict) or entry.get("fingerprint") != server.fingerprint():
            return None
        approved = entry.get("approved")
        return approved if isinstance(approved, bool) else None

    def remember(self, root: Path, server: ServerConfig, approved: bool) -> None:
        """Keep the answer; OSError when it cannot be kept."""
        private_folder(self.folder)
        with locked(self.folder / APPROVALS_LOCK):
            projects = self._read()
            servers = projects.setdefault(_key(root), {})
            servers[server.name] = {
                "approved": approved,
                "fingerprint": server.fingerprint(),
                "command": server.command_line,
                "answered": dt.datetime.now().astimezone().isoformat(),
            }
            record = {"version": APPROVALS_VERSION, "projects": projects}
            write_atomic(self.path, json.dumps(record, indent=2, sort_keys=True) + "\n", mode=FILE_MODE)

    def _read(self) -> dict[str, dict[str, object]]:
        """The remembered answers; an unreadable file counts as none (everything asks again)."""
        if (foreign := foreign_entry(self.path)) is not None:  # its answers may have been planted
            self.problem = f"{foreign}: not read; the project's MCP servers ask again"
            return {}
        try:
            data = safe_read.read_bytes(self.path, self.folder, APPROVALS_MAX_BYTES, follow_symlink=False)
            record = json.loads(data.data.decode("utf-8")) if not data.was_cut else None
        except (OSError, ValueError, RecursionError):
            return {}
        projects = record.get("projects") if isinstance(record, dict) else None
        if not isinstance(projects, dict):
            return {}
        return {key: value for key, value in projects.items() if isinstance(value, dict)}


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


def _key(root: Path) -> str:
    return os.path.realpath(root)
