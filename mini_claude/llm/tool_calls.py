"""A tool call as the model server sent it, made safe to store and send back on every request.

The conversation is re-sent whole on each request, so one bad value stored there breaks the rest
of the session: a NaN cannot be serialised as JSON at all, and the API refuses a repeated tool_use
id or one with characters outside its pattern.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from typing import Any

from mini_claude.core.files import strict_json
from mini_claude.core.untrusted import encodable_value

# What the API accepts as a tool_use id; other characters are replaced.
_TOOL_ID_FORBIDDEN = re.compile(r"[^A-Za-z0-9_-]")
# Deeper input would be stored and re-sent on every request, where serialising it could exceed
# Python's recursion limit; our tools take flat objects.
MAX_TOOL_INPUT_DEPTH = 32
# Why a tool call must not run (each is a notice in prompts/notices.toml).
INVALID_TOOL_INPUT = "invalid_tool_json"
REPEATED_TOOL_ID = "repeated_tool_id"


def parse_tool_input(raw: str) -> dict[str, Any] | None:
    """A tool call's input as a JSON object, or None when it is not one. Strict: `NaN`,
    `Infinity` and numbers too large for a float (1e999) are refused, not turned into floats;
    a lone surrogate (valid JSON: `"\\ud800"`) in any key or value becomes U+FFFD."""
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw, parse_constant=strict_json.refuse_constant, parse_float=_finite_float)
    except (ValueError, RecursionError):  # JSONDecodeError, a refused number, nesting too deep
        return None
    if not isinstance(parsed, dict) or strict_json.nesting_depth(parsed) > MAX_TOOL_INPUT_DEPTH:
        return None
    safe: dict[str, Any] = encodable_value(parsed)
    return safe


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is out of range for a JSON number")
    return number


def _fresh_tool_id(used: set[str]) -> str:
    while (tool_id := "toolu_" + uuid.uuid4().hex[:24]) in used:
        pass
    return tool_id


def claim_tool_id(raw: object, used: set[str]) -> tuple[str, bool]:
    """The id to store for a new tool_use, added to `used`, and whether `raw` repeated one in it.

    Forbidden characters become `_`; a missing id, or one already used in the conversation, is
    replaced by a fresh one.
    """
    tool_id = _TOOL_ID_FORBIDDEN.sub("_", raw) if isinstance(raw, str) else ""
    repeated = tool_id in used
    if not tool_id or repeated:
        tool_id = _fresh_tool_id(used)
    used.add(tool_id)
    return tool_id, repeated
