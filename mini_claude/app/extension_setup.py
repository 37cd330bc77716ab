"""The session's extensions, built from their files and the settings: the skills and custom
commands (one catalog), what they and the hooks approve, the hooks, and the `skill` tool."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mini_claude.app.settings.trust import few
from mini_claude.core.config import PERMISSION_MODE_ALIASES, Settings, memory_project_root
from mini_claude.core.events import EventSink
from mini_claude.extensions.approvals import Approvals
from mini_claude.extensions.hooks.runner import HookRunner
from mini_claude.extensions.hooks.session_hooks import SessionHooks
from mini_claude.extensions.skills import skill_tool
from mini_claude.extensions.skills.catalog import Catalog
from mini_claude.extensions.skills.telling import SkillTelling
from mini_claude.safety.permissions import Answer, AskCallback, PermissionRequest, Permissions
from mini_claude.tools.registry import ToolRegistry

# Claude Code's names for the permission modes, as hooks are told them (`permission_mode`).
CLAUDE_MODES = {ours: theirs for theirs, ours in PERMISSION_MODE_ALIASES.items()}


@dataclass
class Extensions:
    catalog: Catalog
    telling: SkillTelling
    approvals: Approvals
    hooks: SessionHooks
    started: bool = False  # SessionStart has run for this session

    def start(self, source: str) -> None:
        """A conversation starts: `startup` (once), `resume`, `clear` or `compact`."""
        if source == "startup" and self.started:
            return
        self.started = True
        self.hooks.session_started(source)

    def startup_lines(self) -> list[str]:
        """What the user should hear at start: commands whose name a built-in has, and how many
        skills and commands cannot be used (`/skills` says why)."""
        listing = self.catalog.refresh()
        lines = [f"{clash.source}: {clash.reason}" for clash in self.catalog.clashes()]
        if listing.broken:
            count = len(listing.broken)
            lines.append(
                f"{count} skill or command file{'s' if count > 1 else ''} cannot be used: /skills says why"
            )
        return [*lines, *listing.notes]


def build_extensions(settings: Settings, *, sink: EventSink, permissions: Permissions) -> Extensions:
    """What skills, commands and hooks allow becomes rules of `permissions` while it holds. The
    hooks' common fields (`hooks.info`) are the session's to give, once it has them."""
    project_dir = Path(os.path.realpath(settings.project_dir))
    root = memory_project_root(project_dir)
    catalog = Catalog(root, Path.home(), trusted=settings.folder_trusted)
    approvals = Approvals(permissions, root)
    runner = HookRunner(settings.hooks, project_dir)
    hooks = SessionHooks(runner, sink=sink, info=dict, approvals=approvals)
    return Extensions(catalog, SkillTelling(catalog), approvals, hooks)


def project_allowances(root: Path, home: Path) -> list[str]:
    """What the project's skills and commands would allow without asking, a line each: their
    `allowed-tools` count only in a trusted folder, so the trust question names them."""
    catalog = Catalog(root, home, trusted=False)
    catalog.refresh()
    return [
        f"{entry.source}: allow without asking while it runs: {few(entry.allowed_tools)}"
        for entry in catalog.listing.entries
        if entry.scope == "project" and entry.allowed_tools
    ]


def add_skill_tool(tools: ToolRegistry, extensions: Extensions) -> None:
    """The `skill` tool, offered while there is a skill the model may load."""
    catalog = extensions.catalog
    handler = skill_tool.skill_tool(catalog, extensions.approvals)
    tools.add(skill_tool.definition(), handler, offered=lambda: bool(catalog.model_skills()))


def notifying(extensions: Extensions, ask: AskCallback | None) -> AskCallback | None:
    """The permission question, which tells the Notification hooks when it is shown."""
    if ask is None:
        return None
    shown: AskCallback = ask

    def ask_and_notify(request: PermissionRequest) -> Answer:
        extensions.hooks.notify(f"mini-claude needs your permission to use {request.tool}")
        return shown(request)

    return ask_and_notify


def hook_mode(mode: str) -> str:
    return CLAUDE_MODES.get(mode, mode)
