"""Folder trust. A repository's files can do more than instruct: allow tools without asking, set
the environment (a model server, a key), widen the project, change the permission mode, remove
saved sessions, run hooks, give the model the team's memories (`.mini-claude/memory`, loaded
into its memory index and recall). Those take effect only in a folder the user trusts;
instructions are read either way. The answer is remembered per folder (the project root)
in ~/.mini-claude/trusted-folders.json, private to the user, updated under a lock so that two
sessions answering at once both keep their answer.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mini_claude.app.settings.files import shown_setting_path
from mini_claude.app.settings.values import FileValues
from mini_claude.core.config import Settings, app_home
from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.files.private_files import FILE_MODE, foreign_entry, locked, private_folder
from mini_claude.core.files.safe_read import UnreadableFile
from mini_claude.core.untrusted import visible_text
from mini_claude.memory.scopes import MemoryScopes

TRUST_FILE = "trusted-folders.json"
TRUST_MAX_BYTES = 4_000_000  # some thousands of folders (the MCP approvals' file too)
TRUST_VERSION = 1
SHOWN_ITEMS = 4  # of a list in the trust question; the rest are counted
SHOWN_VALUE_CHARS = 40
# Values that start a project's MCP servers without asking: they run commands too.
MCP_APPROVALS = {
    "mcp_enable_all": "start every MCP server of .mcp.json without asking",
    "mcp_enabled": "start MCP servers of .mcp.json without asking",
}


# A mode a project's file may start in without trust: they ask as much as the default or more.
UNGATED_MODES = (None, "ask", "plan")


def gated_parts(values: FileValues) -> list[str]:
    """What a project file's values would do beyond instructions, a phrase each (empty: nothing)."""
    parts = []
    allow = [rule for kind, rule in values.rules if kind == "allow"]
    if allow:
        parts.append("allow without asking: " + few(allow))
    mode = values.scalars.get("permission_mode")
    if mode not in UNGATED_MODES:
        parts.append(f"start in {mode} mode" + (" (nothing asks first)" if mode == "bypass" else ""))
    if values.additional_dirs:
        parts.append("treat as part of the project: " + few(values.additional_dirs))
    if values.scalars.get("read_only_commands") is True:
        parts.append("run read-only commands without asking (ls, cat, git status, …)")
    if values.env:
        parts.append("set environment variables: " + few([f"{k}={_short(v)}" for k, v in values.env.items()]))
    if "session_retention_days" in values.scalars:
        parts.append(f"remove saved sessions unused for {values.scalars['session_retention_days']} days")
    for key, what in MCP_APPROVALS.items():
        value = values.scalars.get(key)
        if value:
            parts.append(what + (": " + few(list(value)) if isinstance(value, tuple) else ""))
    if values.hooks:
        parts.append(
            "run commands on events (hooks): " + few([f"{h.event} {h.command}" for h in values.hooks])
        )
    return parts


def team_memory_parts(root: Path) -> list[str]:
    """The team's memories in the repository at `root` (the working directory's), if there are
    any that a trusted folder would load: a line saying so, as `gated_parts` says a file's parts."""
    scopes = MemoryScopes.for_settings(Settings())  # the working directory's folders, not trusted
    count = scopes.unloaded_team_memories()
    if scopes.team is None or not count:
        return []
    memories = "1 team memory" if count == 1 else f"{count} team memories"
    folder = shown_setting_path(scopes.team.root, root)
    return [f"{folder}: give the model {memories} (its memory index and recall)"]


def without_gated(values: FileValues) -> tuple[FileValues, list[str]]:
    """`values` less what needs trust, and the names of what was taken out."""
    kept = FileValues(
        {k: v for k, v in values.scalars.items() if k not in ("session_retention_days", *MCP_APPROVALS)},
        {},
        [(kind, rule) for kind, rule in values.rules if kind != "allow"],
        [],
        dict(values.unused),
        values.problems,
        [],
    )
    if kept.scalars.get("permission_mode") not in UNGATED_MODES:
        del kept.scalars["permission_mode"]
    if kept.scalars.get("read_only_commands") is True:  # turning them off needs no trust
        del kept.scalars["read_only_commands"]
    removed = [
        name
        for name, present in (
            ("allow rules", any(kind == "allow" for kind, _ in values.rules)),
            ("defaultMode", "permission_mode" in values.scalars and "permission_mode" not in kept.scalars),
            ("additionalDirectories", bool(values.additional_dirs)),
            ("env", bool(values.env)),
            ("cleanupPeriodDays", "session_retention_days" in values.scalars),
            ("enableAllProjectMcpServers", bool(values.scalars.get("mcp_enable_all"))),
            ("enabledMcpjsonServers", bool(values.scalars.get("mcp_enabled"))),
            ("hooks", bool(values.hooks)),
            ("readOnlyCommands", values.scalars.get("read_only_commands") is True),
        )
        if present
    ]
    return kept, removed


class AnswersFile:
    """A file of remembered answers in ~/.mini-claude (the trust file; the MCP approvals): one
    JSON object `{"version": 1, KEY: {…}}`, read only when it is the user's own regular file."""

    def __init__(self, folder: Path, name: str, key: str) -> None:
        self.folder = folder
        self.path = folder / name
        self.key = key  # the record's key holding the answers: "folders", "projects"
        self._lock = folder / f".{name.removesuffix('.json')}.lock"

    def read(self) -> dict[str, Any]:
        """The answers ({} without a file); UnreadableFile when the file cannot be used."""
        if (foreign := foreign_entry(self.path)) is not None:  # its answers may have been planted
            raise UnreadableFile(f"{foreign}: not read")
        try:
            data = safe_read.read_bytes(self.path, self.folder, TRUST_MAX_BYTES, follow_symlink=False)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        except OSError as error:
            raise UnreadableFile(safe_read.describe(error)) from None
        try:
            record = json.loads(data.data.decode("utf-8")) if not data.was_cut else None
        except (ValueError, RecursionError):
            record = None
        answers = record.get(self.key) if isinstance(record, dict) else None
        if not isinstance(answers, dict):
            raise UnreadableFile(f"{visible_text(str(self.path))} is not a file this version can read")
        return answers

    def change(self, change: Callable[[dict[str, Any]], None]) -> None:
        """`change` the answers, and keep them; OSError (UnreadableFile among them) when they
        cannot be kept: a file that cannot be read is left as it is, never written over."""
        private_folder(self.folder)
        with locked(self._lock):
            answers = self.read()
            change(answers)
            record = {"version": TRUST_VERSION, self.key: answers}
            write_atomic(self.path, json.dumps(record, indent=2, sort_keys=True) + "\n", mode=FILE_MODE)


class TrustStore(AnswersFile):
    """The remembered answers, by folder (its resolved path)."""

    def __init__(self, home: Path | None = None) -> None:
        super().__init__(home or app_home(), TRUST_FILE, "folders")

    def answer(self, folder: Path) -> bool | None:
        """True or False when the user answered for `folder`; None when not (or unreadable)."""
        try:
            entry = self.read().get(folder_key(folder))
        except UnreadableFile:
            return None
        trusted = entry.get("trusted") if isinstance(entry, dict) else None
        return trusted if isinstance(trusted, bool) else None

    def remember(self, folder: Path, trusted: bool) -> None:
        """Keep the answer for `folder`; OSError when it cannot be kept (its message says how to
        fix it)."""
        answer = {"trusted": trusted, "answered": dt.datetime.now().astimezone().isoformat()}
        try:
            self.change(lambda folders: folders.update({folder_key(folder): answer}))
        except UnreadableFile as error:
            raise UnreadableFile(f"{error}: remove it to be asked again") from None


def folder_key(folder: Path) -> str:
    """How a folder is named in an answers file: its resolved path."""
    return os.path.realpath(folder)


def few(items: Sequence[str]) -> str:
    """The first SHOWN_ITEMS of `items`, made visible, and how many more there are."""
    shown = ", ".join(visible_text(item) for item in items[:SHOWN_ITEMS])
    return shown + (f" and {len(items) - SHOWN_ITEMS} more" if len(items) > SHOWN_ITEMS else "")


def _short(value: str) -> str:
    return value if len(value) <= SHOWN_VALUE_CHARS else value[: SHOWN_VALUE_CHARS - 1] + "…"
