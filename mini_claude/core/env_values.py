"""One setting read from the environment: a number, an on/off switch, the memory mode, the model
server's address; each wrong value a ConfigError naming the variable and what it must be. And the
model a name stands for, wherever a model is named (a flag, the environment, a settings file,
`/model`): `opus`, `sonnet` and `haiku` are the current model of each family, as in Claude Code."""

from __future__ import annotations

import os
import re
from typing import Literal

BASE_URL_SCHEMES = ("http", "https")  # all the SDK's HTTP client speaks
_URL_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
# MINI_CLAUDE_MEMORY: the model saves freely, asks before each save, or memory is off.
MemoryMode = Literal["on", "ask", "off"]


class ConfigError(ValueError):
    """A setting has a value we cannot use; the message names it and says what is expected."""


def env_number(name: str, default: float, kind: type[int] | type[float] = float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value: float = kind(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number") from None
    if value < 0:
        raise ConfigError(f"{name}={raw!r} must not be negative")
    return value


def env_switch(name: str, *, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("on", "1", "true", "yes"):
        return True
    if raw in ("off", "0", "false", "no"):
        return False
    raise ConfigError(f"{name}={raw!r} is not on or off")


def memory_mode(*, default: MemoryMode) -> MemoryMode:
    """MINI_CLAUDE_MEMORY: `on`, `ask` (every save asks first) or `off` (no index, no recall, no
    saves by the model); the switch's other spellings of on and off work too. Unset: `default`
    (the settings files' `autoMemoryEnabled`, else on)."""
    raw = os.environ.get("MINI_CLAUDE_MEMORY", "").strip().lower()
    if raw == "ask":
        return "ask"
    try:
        return "on" if env_switch("MINI_CLAUDE_MEMORY", default=default != "off") else "off"
    except ConfigError:
        raise ConfigError(f"MINI_CLAUDE_MEMORY={raw!r} is not on, ask or off") from None


def env_base_url() -> str | None:
    """ANTHROPIC_BASE_URL, None when unset or blank (`export ANTHROPIC_BASE_URL=` is how people
    unset it: the real API). An address without `http://` would only fail at the first message,
    after retries, with a protocol error; it is refused at start with the fix."""
    raw = os.environ.get("ANTHROPIC_BASE_URL", "").strip()
    if not raw:
        return None
    scheme = _URL_SCHEME.match(raw)
    if scheme is None:
        raise ConfigError(
            f"ANTHROPIC_BASE_URL={raw!r} has no http:// or https://: add it "
            f"(ANTHROPIC_BASE_URL=http://{raw.lstrip('/')})"
        )
    if scheme.group(1).lower() not in BASE_URL_SCHEMES:
        raise ConfigError(f"ANTHROPIC_BASE_URL={raw!r} must start with http:// or https://")
    if not raw[scheme.end() :].split("/", 1)[0]:
        raise ConfigError(f"ANTHROPIC_BASE_URL={raw!r} names no host (like http://127.0.0.1:8080)")
    return raw


MODEL_ALIASES = {
    "opus": "claude-opus-5-5",
    "sonnet": "claude-sonnet-5-5",
    "haiku": "claude-haiku-5-5",
}


def resolve_model(name: str) -> str:
    """The model `name` stands for: an alias's current model (any case), else `name` itself (a
    dated id, a local server's model)."""
    return MODEL_ALIASES.get(name.strip().lower(), name.strip())
