"""Checking a tool call's input against our tool schemas (flat, object-typed), with the problem
in words the model can act on."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mini_claude.core import prompts

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def schema_problem(schema: Mapping[str, Any], value: object) -> str | None:
    """What is wrong with a tool input against our (flat, object-typed) schemas, or None."""
    if not isinstance(value, dict):
        return prompts.notice("input_not_object", got=_json_type(value))
    properties: Mapping[str, Any] = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in value:
            return prompts.notice("input_missing_parameter", parameter=repr(key))
    if schema.get("additionalProperties", True) is False:
        unknown = sorted(set(value) - set(properties))
        if unknown:
            return prompts.notice("input_unknown_parameter", parameter=repr(unknown[0]))
    for key, item in value.items():
        spec, parameter = properties.get(key, {}), repr(key)
        expected = spec.get("type")
        if expected and not _is_type(item, expected):
            return prompts.notice(
                "input_wrong_type", parameter=parameter, expected=expected, got=_json_type(item)
            )
        if isinstance(item, float) and not math.isfinite(item):
            return prompts.notice("input_not_finite", parameter=parameter, got=item)
        if "minimum" in spec and isinstance(item, int | float) and item < spec["minimum"]:
            return prompts.notice(
                "input_below_minimum", parameter=parameter, minimum=spec["minimum"], got=item
            )
        if "enum" in spec and item not in spec["enum"]:
            return prompts.notice(
                "input_not_allowed", parameter=parameter, allowed=spec["enum"], got=repr(item)
            )
    return None


def _is_type(value: object, expected: str) -> bool:
    if isinstance(value, bool) and expected != "boolean":
        return False  # JSON true/false is not a number
    return isinstance(value, _JSON_TYPES.get(expected, (object,)))


def _json_type(value: object) -> str:
    for name in _JSON_TYPES:
        if name != "number" and _is_type(value, name):
            return name
    return "null" if value is None else ("number" if isinstance(value, float) else type(value).__name__)


def describe_schema(schema: Mapping[str, Any]) -> str:
    required = set(schema.get("required", []))
    parts = [
        f"{key} ({spec.get('type', 'any')}{', required' if key in required else ''})"
        for key, spec in schema.get("properties", {}).items()
    ]
    return ", ".join(parts) or prompts.notice("input_no_parameters")
