"""`/status`: the model, server, permission mode and folder trust, each value with where it came
from, and every settings and instruction file in effect. The instruction files' lines are
`/memory`'s first part too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_claude import __version__
from mini_claude.app.instructions.hierarchy import InstructionSet
from mini_claude.app.instructions.reading import shown_path
from mini_claude.core.config import ANTHROPIC_API_URL
from mini_claude.core.files.safe_read import format_size
from mini_claude.core.untrusted import visible_text
from mini_claude.llm.pricing import format_dollars
from mini_claude.ui.commands.registry import CommandContext, command

if TYPE_CHECKING:
    from mini_claude.app.session import Session

VALUES = (  # shown by /status: (label, Settings origin key)
    ("Model", "model"),
    ("Permission mode", "permission_mode"),
    ("Context window", "context_window"),
    ("Early recall", "early_recall"),
    ("Memory", "memory_enabled"),
    ("Session retention", "session_retention_days"),
    ("Read-only commands", "read_only_commands"),
    ("Thinking", "thinking"),
    ("Spend cap", "max_cost"),
)


def instruction_lines(loaded: InstructionSet) -> list[str]:
    """Each instruction file in effect with its scope and size, then those skipped, with why."""
    count = len(loaded.loaded) + len(loaded.path_rules)
    if not count and not loaded.skipped and not loaded.left_out:
        return ["Instruction files: none (CLAUDE.md, CLAUDE.local.md, .claude/CLAUDE.md, AGENTS.md, rules)"]
    lines = [f"Instruction files ({count}):"]
    for entry in loaded.loaded:
        via = f", imported by {shown_path(entry.imported_by)}" if entry.imported_by is not None else ""
        kind = " rule" if entry.kind == "rule" else ""
        cut = ", cut" if entry.cut else ""
        lines.append(
            f"  {shown_path(entry.path)}  ({entry.scope}{kind}, {format_size(entry.size)}{cut}{via})"
        )
    for rule in loaded.path_rules:
        globs = visible_text(", ".join(rule.globs))[:120]
        size = format_size(rule.size)
        lines.append(f"  {shown_path(rule.path)}  ({rule.scope} rule, {size}; when a tool uses {globs})")
    for entry in loaded.left_out:
        lines.append(f"  {shown_path(entry.path)}  (left out: past the total limit)")
    for skipped in loaded.skipped:
        lines.append(f"  skipped: {visible_text(skipped.reason)}")
    return lines


def status_lines(session: Session) -> list[str]:
    settings, agent = session.settings, session.agent
    origins = settings.origins
    values = {
        "model": agent.model,
        "permission_mode": session.permissions.mode,
        "context_window": f"{settings.context_window:,} tokens",
        "early_recall": "on" if settings.early_recall else "off",
        "memory_enabled": settings.memory_mode,
        "session_retention_days": f"{settings.session_retention_days} days",
        "read_only_commands": "run unasked" if session.permissions.rules.read_only_commands else "ask",
        "thinking": f"on, up to {agent.thinking:,} tokens" if agent.thinking else "off",
        "max_cost": "none" if agent.spend.cap is None else f"{format_dollars(agent.spend.cap)} for this run",
    }
    # Values a command changed for this session: the command that did.
    changed = {"model": agent.model != settings.model, "thinking": agent.thinking != settings.thinking_budget}
    commands = {"model": "/model", "thinking": "/think"}
    lines = [f"mini-claude {__version__}"]
    for label, key in VALUES:
        origin = f"this session ({commands[key]})" if changed.get(key) else origins.get(key)
        lines.append(f"{label}: {visible_text(values[key])}  ({_origin(origin)})")
    address = visible_text(settings.base_url or ANTHROPIC_API_URL)
    server = f"Server: {address}  ({_origin(origins.get('base_url'))})"
    credentials = origins.get("credentials")
    lines.append(
        server + (f", credentials from {visible_text(credentials)}" if credentials else ", no credentials")
    )
    lines.append(f"Working directory: {shown_path(settings.project_dir)}")
    for folder in settings.additional_dirs:
        lines.append(f"Also in the project: {shown_path(folder)}")
    lines.append("Folder trust: " + ("trusted" if settings.folder_trusted else "not trusted"))
    lines.append("Settings files:" if settings.setting_files else "Settings files: none")
    for report in settings.setting_files:
        lines.append(f"  {visible_text(report.path)}  ({report.scope}: {visible_text(report.status)})")
    lines += permission_rule_lines(session)
    for note in settings.notes:
        lines.append(f"  note: {visible_text(note)}")
    return [*lines, *instruction_lines(session.instructions())]


def permission_rule_lines(session: Session) -> list[str]:
    """How many rules of each kind each source gave, as /permissions lists them one by one (the
    same rules: those the permission checks use)."""
    rules = session.permissions.rules.rules
    if not rules:
        return ["Permission rules: none"]
    lines = [f"Permission rules ({len(rules)}; /permissions lists them):"]
    for source in dict.fromkeys(rule.entry.source for rule in rules):
        kinds = [rule.behaviour for rule in rules if rule.entry.source == source]
        counts = ", ".join(f"{kinds.count(k)} {k}" for k in ("allow", "ask", "deny") if k in kinds)
        lines.append(f"  {visible_text(source)}  ({counts})")
    return lines


def _origin(origin: str | None) -> str:
    if origin is None or origin == "default":
        return "default"
    if origin == "flag":
        return "command-line flag"
    return visible_text(origin)


@command("status", "Show the model, server, mode, and every settings and instruction file in effect")
def _status(ctx: CommandContext, argument: str) -> None:
    ctx.say("\n".join(status_lines(ctx.session)))
