"""The `key: value` lines inside a frontmatter block, as codec.py reads them: one line per key, and
the few multi-line forms of YAML that Claude Code's skill, command and rule files use:

    description: >            a folded or literal block (`>`, `|`, `>-`, `|-`, …): its indented
      Reviews a pull request    lines, joined into one line
    argument-hint: [pr-number] [focus]     a plain value is kept as written
    allowed-tools:            a block list: `- item` lines (indented or not) after an empty value
      - Read
      - Bash(git diff:*)
    description: first words  an indented line after a plain value continues it
      and more words

A list's items are kept in `lists`; `fields` holds them joined with ", " so a reader that wants one
line still has one. Every value is folded to one line (`fold_value`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mini_claude.core.frontmatter.block import Block, scan_lines
from mini_claude.core.frontmatter.scalars import unquote_double, unquote_single

_KEY = re.compile(r"[A-Za-z0-9_-]+")
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # exactly what str.splitlines() breaks on
_HAS_LINE_BREAK = re.compile(f"[{_LINE_BREAKS}]")
_WHITESPACE_RUN = re.compile(r"\s+")
BLOCK_INDICATORS = ("|", ">", "|-", ">-", "|+", ">+")
WARNING_SNIPPET_CHARS = 40  # how much of an offending line a warning quotes
_BRACKETS = {"(": ")", "[": "]", "{": "}"}


def fold_value(s: str) -> str:
    """Make `s` a single line: each whitespace run containing a line break becomes one space, and the
    ends are stripped. Use it for anything written into a one-line slot (frontmatter, index lines)."""
    if _HAS_LINE_BREAK.search(s):
        s = _WHITESPACE_RUN.sub(lambda m: " " if _HAS_LINE_BREAK.search(m.group()) else m.group(), s)
    return s.strip()


@dataclass
class _Open:
    """The key whose value may go on in the lines below it."""

    key: str | None  # None: a duplicate, whose further lines are skipped as it is
    indent: int
    may_list: bool  # its value was empty: `- item` lines make it a list
    parts: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)


def parse_fields(
    text: str, block: Block, warnings: list[str]
) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """The block's fields (keys lowercased, the first of duplicates wins) and its block lists."""
    fields: dict[str, str] = {}
    lists: dict[str, tuple[str, ...]] = {}
    first_seen: dict[str, int] = {}
    open_key: _Open | None = None
    lines = scan_lines(text[: block.inner_end], block.inner_start)
    for line_no, (content, _, _, _) in enumerate(lines, start=block.open_line + 1):
        stripped = content.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(content) - len(content.lstrip(" \t"))
        item = stripped == "-" or stripped.startswith(("- ", "-\t"))
        if open_key is not None and (indent > open_key.indent or (item and open_key.may_list)):
            _continue(open_key, stripped, item, line_no, warnings)
            continue
        _close(open_key, fields, lists)
        open_key = None
        raw_key, colon, raw_value = content.partition(":")
        key = raw_key.strip()
        if not colon or not _KEY.fullmatch(key):
            warnings.append(
                f"line {line_no}: {snippet(stripped)} is not `key: value`; skipped "
                "(keys use letters, digits, _ and -; start a line with # to make it a comment)"
            )
            continue
        key = key.lower()
        value = raw_value.strip()
        if key in fields:
            warnings.append(
                f"line {line_no}: duplicate key {key!r} ignored; the value from line {first_seen[key]} "
                "is used (delete one of them)"
            )
            open_key = _Open(None, indent, may_list=False)
            continue
        first_seen[key] = line_no
        if value in BLOCK_INDICATORS or not value:
            fields[key] = ""
            open_key = _Open(key, indent, may_list=not value)
            continue
        fields[key] = parse_value(raw_value, line_no, warnings)
        if value[0] not in ("'", '"'):
            open_key = _Open(key, indent, may_list=False, parts=[fields[key]])
    _close(open_key, fields, lists)
    return fields, lists


def _continue(open_key: _Open, stripped: str, item: bool, line_no: int, warnings: list[str]) -> None:
    if open_key.key is None:
        return
    if item and open_key.may_list and not open_key.parts:
        open_key.items.append(parse_value(stripped[1:], line_no, warnings))
    elif open_key.items:  # an item's value going on over an indented line
        open_key.items[-1] = f"{open_key.items[-1]} {stripped}".strip()
    else:
        open_key.parts.append(stripped)


def _close(open_key: _Open | None, fields: dict[str, str], lists: dict[str, tuple[str, ...]]) -> None:
    if open_key is None or open_key.key is None:
        return
    if open_key.items:
        items = tuple(item for item in (fold_value(i) for i in open_key.items) if item)
        lists[open_key.key] = items
        fields[open_key.key] = ", ".join(items)
    elif open_key.parts:
        fields[open_key.key] = fold_value(" ".join(open_key.parts))


def parse_value(raw: str, line_no: int, warnings: list[str]) -> str:
    value = raw.strip()
    if value[:1] in ("'", '"'):
        unquoted = unquote_single(value) if value[0] == "'" else unquote_double(value)
        if unquoted is None:
            warnings.append(
                f"line {line_no}: quoted value {snippet(value)} is not closed by its last character or "
                "holds a bad escape; kept as written (close the quote; write a backslash as \\\\)"
            )
        else:
            value = unquoted
    return fold_value(value)


def split_list(value: str) -> list[str]:
    """An inline list as frontmatter writes one: `a, b`, `[a, b]`, `["a", 'b']`. Commas inside
    brackets or quotes belong to the item (`Bash(npm run a, b)`, `src/*.{ts,tsx}`)."""
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    items, current, closers, quote = [], "", [], ""
    for char in value:
        if quote:
            quote = "" if char == quote else quote
        elif char in ("'", '"'):
            quote = char
        elif char in _BRACKETS:
            closers.append(_BRACKETS[char])
        elif closers and char == closers[-1]:
            closers.pop()
        elif char == "," and not closers:
            items.append(current)
            current = ""
            continue
        current += char
    items.append(current)
    return [unquoted for unquoted in (_unquoted_item(item.strip()) for item in items) if unquoted]


def _unquoted_item(item: str) -> str:
    if item[:1] == '"':
        return unquote_double(item) or item
    if item[:1] == "'":
        return unquote_single(item) or item
    return item


def snippet(s: str) -> str:
    if len(s) > WARNING_SNIPPET_CHARS:
        s = s[: WARNING_SNIPPET_CHARS - 1] + "…"
    return repr(s)
