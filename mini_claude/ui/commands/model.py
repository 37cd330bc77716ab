"""`/model`: without a name, a list to choose from (the current model marked): the current Opus,
Sonnet and Haiku by their aliases, and the model in use if it is none of them; with a name (or
an alias), that model for the rest of the session."""

from __future__ import annotations

from urllib.parse import urlsplit

from mini_claude.core.config import ANTHROPIC_API_URL
from mini_claude.core.env_values import MODEL_ALIASES, resolve_model
from mini_claude.core.events import UsageReport
from mini_claude.core.untrusted import visible_text
from mini_claude.llm.pricing import estimate_cost
from mini_claude.ui.commands.registry import CommandContext, command
from mini_claude.ui.questions.choose_one import choose_one

CURRENT_MARK = " ✔ (in use)"
HELP_HINT = "/help for commands"
PRICE_UNKNOWN = "price unknown"


def model_choices(current: str) -> list[tuple[str, str]]:
    """(model, label) rows: each alias's model, then the one in use when it is none of them."""
    rows = [(model, f"{alias:<7}{model}") for alias, model in MODEL_ALIASES.items()]
    if current not in MODEL_ALIASES.values():
        rows.append((current, f"{'':<7}{current}"))
    return rows


def price_note(model: str) -> str:
    """`` when the model's list price is known, else why /cost will show tokens only."""
    return "" if estimate_cost(model, UsageReport()) is not None else f" ({PRICE_UNKNOWN}: tokens only)"


@command("model", "Choose or change the model (opus, sonnet, haiku, or a name)", usage="[name]")
def _model(ctx: CommandContext, argument: str) -> None:
    agent = ctx.session.agent
    if not argument:
        if not ctx.console.is_terminal:  # no list without a terminal: say which it is
            ctx.say(f"Model: {visible_text(agent.model)}")
            return
        rows = model_choices(agent.model)
        models = [model for model, _ in rows]

        def row(index: int, width: int) -> str:
            model, label = rows[index]
            text = visible_text(label) + (CURRENT_MARK if model == agent.model else "") + price_note(model)
            return text[:width]

        chosen = choose_one("Which model?", len(rows), row, selected=models.index(agent.model))
        if chosen is None or models[chosen] == agent.model:
            ctx.say(f"Model: {visible_text(agent.model)} (unchanged)")
            return
        argument = models[chosen]
    if any(ch.isspace() for ch in argument.strip()):
        ctx.say("A model name has no spaces, e.g. /model sonnet")
        return
    model = resolve_model(argument)
    agent.model = model
    ctx.session.transcript.note_model(model)
    ctx.say(f"Model set to {visible_text(model)} for this session{price_note(model)}.")
    from mini_claude.agent.spend_cap import unchecked_warning

    if (cap := agent.spend.cap) is not None and (warning := unchecked_warning(cap, [model])):
        ctx.say(visible_text(warning), "yellow")


def banner(version: str, model: str, base_url: str | None, width: int = 10_000) -> str:
    """The first line of the REPL: the version, the model, the server when it is not Anthropic's
    (said more briefly when the line would not fit `width`)."""
    server = other_server(base_url)
    forms = [f"server {visible_text(server)}", visible_text(server)] if server is not None else [""]
    lines = [
        " · ".join(part for part in (f"mini-claude {version}", visible_text(model), form, HELP_HINT) if part)
        for form in forms
    ]
    return next((line for line in lines if len(line) <= width), lines[-1])


def other_server(base_url: str | None) -> str | None:
    """`localhost:8080` for ANTHROPIC_BASE_URL=http://localhost:8080/v1; None for the Anthropic API
    (or none set). Credentials in the address are never shown."""
    if not base_url:
        return None
    address = urlsplit(base_url)
    host = address.netloc.rpartition("@")[2]
    if host.lower().removesuffix(":443") == urlsplit(ANTHROPIC_API_URL).netloc:
        return None
    return host + address.path.rstrip("/")
