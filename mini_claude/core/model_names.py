"""Model names a person types: `opus`, `sonnet` and `haiku` stand for the current model of each
family, as in Claude Code (`--model sonnet`, `/model opus`, ANTHROPIC_MODEL, the settings files).
Any other name is sent as it is (a dated id, a local server's model)."""

from __future__ import annotations

MODEL_ALIASES = {
    "opus": "claude-opus-5-5",
    "sonnet": "claude-sonnet-5-5",
    "haiku": "claude-haiku-5-5",
}


def resolve_model(name: str) -> str:
    """The model `name` stands for: an alias's current model (any case), else `name` itself."""
    return MODEL_ALIASES.get(name.strip().lower(), name.strip())
