"""The user's skills and custom commands at the prompt (`/name args`, completion and /help list them),
`/skills` (what there is, where each comes from, and what cannot be used and why) and `/hooks`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_claude.app.invocation import prepare, run_prepared
from mini_claude.core.untrusted import visible_text
from mini_claude.extensions.skills.entries import Entry, Kind
from mini_claude.ui.commands.registry import CommandContext, command, extra_commands, fallback

if TYPE_CHECKING:
    from mini_claude.app.session import Session

KIND_HEADINGS: dict[Kind, str] = {"skill": "Skills", "command": "Custom commands"}
DESCRIPTION_SHOWN_CHARS = 100


@extra_commands
def _listed(session: Session) -> list[tuple[str, str, str]]:
    catalog = session.extensions.catalog
    catalog.refresh()
    return [(entry.name, _described(entry), entry.argument_hint) for entry in catalog.runnable()]


@fallback
def _run(ctx: CommandContext, name: str, argument: str) -> bool:
    """`/name argument` for a skill or custom command; False when there is none so named."""
    catalog = ctx.session.extensions.catalog
    catalog.refresh()
    entry = catalog.find(name.lower())
    if entry is None:
        return False
    if ctx.run_turn is None or ctx.interruptible is None:
        ctx.say(f"/{entry.name} runs a {entry.kind} with the model, which needs the REPL.", "red")
        return True
    prepared = ctx.interruptible(lambda: prepare(ctx.session, entry, argument))
    if prepared is None:
        return True  # stopped (Esc, Ctrl+C): it said so
    for line in prepared.shown:
        ctx.say(line, "dim")
    if prepared.problems:
        for problem in prepared.problems:
            ctx.say(problem, "red")
        ctx.say(f"/{entry.name} was not sent.", "dim")
        return True
    model = f" with {visible_text(entry.model)}" if entry.model else ""
    ctx.say(f"Running /{entry.name} ({entry.kind} from {visible_text(entry.source)}){model}", "dim")
    run_prepared(ctx.session, prepared, ctx.run_turn)
    return True


@command("skills", "List skills and custom commands, where each comes from, and any that cannot be used")
def _skills(ctx: CommandContext, argument: str) -> None:
    catalog = ctx.session.extensions.catalog
    listing = catalog.refresh()
    lines: list[str] = []
    for kind, heading in KIND_HEADINGS.items():
        entries = list(catalog.of_kind(kind))
        lines.append(f"{heading} ({len(entries)}):" if entries else f"{heading}: none")
        for entry in entries:
            lines.append(f"  /{entry.name}  {_described(entry)}")
            lines.append(f"      {visible_text(entry.source)}{_details(ctx, entry)}")
            lines += [f"      note: {visible_text(note)}" for note in entry.notes]
    problems = [*catalog.clashes(), *listing.broken]
    if problems:
        lines.append("Not used:")
        lines += [f"  {visible_text(item.source)}: {visible_text(item.reason)}" for item in problems]
    lines += [visible_text(note) for note in listing.notes]
    if not listing.entries and not problems:
        lines.append(
            "Add one: ~/.claude/skills/NAME/SKILL.md or .claude/commands/NAME.md (see docs/extensions.md)."
        )
    ctx.say("\n".join(lines))


@command("hooks", "List the hooks of the settings files, each with the file it comes from")
def _hooks(ctx: CommandContext, argument: str) -> None:
    specs = ctx.session.extensions.hooks.runner.specs
    lines = [f"Hooks ({len(specs)}):" if specs else "Hooks: none"]
    for spec in specs:
        matcher = f" [{visible_text(spec.matcher)}]" if spec.matcher not in ("", "*") else ""
        lines.append(f"  {spec.event}{matcher}: {visible_text(spec.command)}")
        lines.append(f"      {visible_text(spec.source)} ({spec.scope}), timeout {spec.timeout:g} s")
    settings = ctx.session.settings
    ignored = [note for note in settings.notes if "hooks" in note]
    lines += [visible_text(note) for note in ignored]
    if not specs and not ignored:
        lines.append('Add them under "hooks" in .claude/settings.json (see docs/extensions.md).')
    ctx.say("\n".join(lines))


def _described(entry: Entry) -> str:
    text = visible_text(entry.description)
    return text if len(text) <= DESCRIPTION_SHOWN_CHARS else text[: DESCRIPTION_SHOWN_CHARS - 1] + "…"


def _details(ctx: CommandContext, entry: Entry) -> str:
    parts = []
    if entry.argument_hint:
        parts.append(f"arguments: {visible_text(entry.argument_hint)}")
    if entry.allowed_tools:
        allowed = ctx.session.extensions.catalog.allowed_tools(entry)
        tools = visible_text(", ".join(entry.allowed_tools))
        parts.append(
            f"allowed-tools: {tools}" if allowed else f"allowed-tools ignored (folder not trusted): {tools}"
        )
    if entry.model:
        parts.append(f"model: {visible_text(entry.model)}")
    if entry.kind == "skill" and not entry.model_invocable:
        parts.append("only you can run it")
    return " · " + " · ".join(parts) if parts else ""
