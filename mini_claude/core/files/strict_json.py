"""JSON read as the standard defines it. Python's json also reads NaN and Infinity, which no other
reader accepts: a value holding one could never be written back, or sent in a request, as JSON."""

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
