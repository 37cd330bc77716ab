"""Every text the model reads lives in `prompts/`; this module finds and fills them.

In a wheel the folder ships as `mini_claude/prompts`; in a source checkout it is the
top-level `prompts/` next to the package.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@cache
def prompts_dir() -> Path:
    package_dir = Path(__file__).resolve().parents[1]  # mini_claude/, above core/
    for candidate in (package_dir / "prompts", package_dir.parent / "prompts"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"prompts folder not found next to {package_dir}")


@cache
def load(name: str) -> str:
    return (prompts_dir() / name).read_text(encoding="utf-8")


@cache
def load_toml(name: str) -> dict[str, Any]:
    return tomllib.loads(load(name))


def fill(template: str, **values: object) -> str:
    """Replace every `{{key}}` in one pass, so inserted text is never expanded again."""

    def substitute(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"prompt placeholder {{{{{key}}}}} has no value")
        return str(values[key])

    return _PLACEHOLDER.sub(substitute, template)


def render(name: str, **values: object) -> str:
    return fill(load(name), **values)


def notice(key: str, **values: object) -> str:
    """A short message the model reads in a tool result or a notice (see notices.toml)."""
    return fill(load_toml("notices.toml")[key].strip(), **values)


def extension_text(key: str, **values: object) -> str:
    """A text about the skills, commands and hooks the user configured (see extensions.toml)."""
    return fill(load_toml("extensions.toml")[key].strip(), **values)
