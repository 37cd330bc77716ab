"""Quoted scalars in frontmatter values: reading `'single'` and `"double"` quotes, and writing a
value plain when that reads back unchanged, else double-quoted with escapes."""

from __future__ import annotations

import re
from collections.abc import Callable

_HEX = re.compile(r"[0-9A-Fa-f]+")
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}
_HEX_ESCAPE_WIDTHS = {"x": 2, "u": 4, "U": 8}
_ESCAPE_HELP = r"use \\ \" \n \t \r \xHH \uHHHH or \UHHHHHHHH"
# Plain values starting with these, or containing ": " / " #", are quoted on write. Our parser would
# read most of them fine; quoting keeps the block loadable as YAML by other tools too.
_YAML_INDICATORS = frozenset("\"'#&*!|>%@`[]{},?:-")


def unquote_single(value: str) -> str | None:
    """`'it''s'` -> `it's`; None unless the closing quote is the last character."""
    out: list[str] = []
    i = 1
    while i < len(value):
        ch = value[i]
        if ch == "'":
            if value[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out) if i == len(value) - 1 else None
        out.append(ch)
        i += 1
    return None


def unquote_double(value: str, bad_escape: Callable[[str], None]) -> str | None:
    """Decode a double-quoted value; None unless the closing quote is the last character.

    An unknown or malformed escape is kept as written (backslash included), with a warning.
    """
    out: list[str] = []
    i = 1
    while i < len(value):
        ch = value[i]
        if ch == '"':
            return "".join(out) if i == len(value) - 1 else None
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        code = value[i + 1 : i + 2]
        if code in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[code])
            i += 2
            continue
        width = _HEX_ESCAPE_WIDTHS.get(code)
        digits = value[i + 2 : i + 2 + width] if width else ""
        if width and len(digits) == width and _HEX.fullmatch(digits) and int(digits, 16) <= 0x10FFFF:
            out.append(chr(int(digits, 16)))
            i += 2 + width
            continue
        bad_escape(f"unknown escape {value[i : i + 2]!r} kept as written ({_ESCAPE_HELP})")
        out.append("\\")
        i += 1
    return None


def format_value(value: str) -> str:
    """Write `value` (already folded) plain when that reads back unchanged, else double-quoted."""
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
    return '"' + "".join(_escape_char(ch) for ch in value) + '"'


def _escape_char(ch: str) -> str:
    if ch in ('"', "\\"):
        return "\\" + ch
    if ch == "\t":
        return "\\t"
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == " " or ch.isprintable():
        return ch
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
