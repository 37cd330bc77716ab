"""JSON read as the standard defines it, and measured before it is trusted. Python's json also reads
NaN and Infinity, which no other reader accepts: a value holding one could never be written back,
or sent in a request, as JSON."""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes) -> Any:
    """`text`'s JSON value; ValueError (a JSONDecodeError, a NaN or Infinity refused) or
    RecursionError (nested too deeply) when it is none."""
    return json.loads(text, parse_constant=refuse_constant)


def refuse_constant(name: str) -> Any:
    """For json's `parse_constant`: NaN, Infinity and -Infinity are no JSON numbers."""
    raise ValueError(f"{name} is not a JSON number")


def nesting_depth(value: object) -> int:
    """How deeply lists and objects nest in `value` (`{}` is 1, `{"a": []}` 2), counted without
    recursion: the point is to refuse a hostile depth before anything recurses into it."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            pending.extend((child, depth + 1) for child in children)
    return deepest
