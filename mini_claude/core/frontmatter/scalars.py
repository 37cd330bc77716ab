"""Quoted frontmatter values. A value is written plain when that reads back unchanged, else as a
JSON string, which is also a valid YAML double-quoted scalar; `'single'` quotes are read too."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

# Plain values starting with these, or containing ": " / " #", are quoted on write. Our parser would
# read most of them fine; quoting keeps the block loadable as YAML by other tools too.
_YAML_INDICATORS = frozenset("\"'#&*!|>%@`[]{},?:-")
# YAML escapes that JSON lacks (hand edits, and files written before values were JSON): an escaped
# backslash is matched first so that `\\x41` stays a backslash followed by "x41".
_YAML_ONLY_ESCAPE = re.compile(r"\\(?:(\\)|x([0-9A-Fa-f]{2})|U([0-9A-Fa-f]{8}))")


def unquote_single(value: str) -> str | None:
    """`'it''s'` -> `it's`; None unless the closing quote is the last character."""
    inner = value[1:-1]
    if len(value) < 2 or not value.endswith("'") or inner.replace("''", "").count("'"):
        return None
    return inner.replace("''", "'")


def unquote_double(value: str) -> str | None:
    """A double-quoted value read as a JSON string (YAML's `\\xHH` and `\\UHHHHHHHH` allowed too);
    None when it is not one: a bad escape, or text after the closing quote."""
    try:
        decoded = json.loads(_YAML_ONLY_ESCAPE.sub(_as_json_escape, value))
    except ValueError:
        return None
    return decoded if isinstance(decoded, str) else None


def _as_json_escape(match: re.Match[str]) -> str:
    if match.group(1):
        return match.group(0)
    code = int(match.group(2) or match.group(3), 16)
    if code > 0x10FFFF:
        return match.group(0)  # left for json.loads to reject
    return json.dumps(chr(code))[1:-1]


def format_value(value: str) -> str:
    """Write `value` (already folded) plain when that reads back unchanged, else as a JSON string
    in which every invisible character is escaped, so a hand editor sees what is there."""
    plain_is_safe = (
        value
        and value.isprintable()  # also rules out tabs, line breaks and invisible format characters
        and not value[0].isspace()
        and not value[-1].isspace()
        and value[0] not in _YAML_INDICATORS
        and ": " not in value
        and " #" not in value
        and not value.endswith(":")
    )
    if plain_is_safe:
        return value
    quoted = json.dumps(value, ensure_ascii=False)
    return "".join(ch if ch.isprintable() else json.dumps(ch)[1:-1] for ch in quoted)


def split_outside(value: str, is_separator: Callable[[str], bool], brackets: str) -> list[str]:
    """The non-empty parts of a frontmatter list value, split at separators that are not inside
    the `brackets` pair (`{}`: `a/{b,c}` is one glob; `()`: `Bash(git diff:*)` is one rule)."""
    opening, closing = brackets[0], brackets[1]
    parts, current, depth = [], "", 0
    for char in value:
        if is_separator(char) and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (char == opening) - (char == closing)
        current += char
    parts.append(current)
    return [part.strip() for part in parts if part.strip()]
