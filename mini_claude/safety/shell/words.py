"""One shell word as bash will pass it to a program: quotes removed, `~` expanded, and whether it
is known before the command runs at all (an expansion, a command substitution, a brace or
ANSI-C word is not: its text is then None, and no rule can vouch for it)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Node = Any  # a tree_sitter.Node (the library ships no type stubs we could name here)

# Node types whose value is only known when bash runs the line.
DYNAMIC_NODES = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "ansi_c_string",
        "translated_string",
        "brace_expression",
        "array",
        "$",
    }
)
NESTED_COMMAND_NODES = ("command_substitution", "process_substitution")
_GLOB_CHARS = re.compile(r"(?<!\\)[*?\[]")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_DOUBLE_QUOTE_ESCAPES = re.compile(r"\\([$`\"\\\n])")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
# Quoted when shown: what would make a word read as several, or as shell syntax.
_NEEDS_QUOTES = re.compile(r"[\s'\"\\$`;&|<>()]")


@dataclass(frozen=True)
class Word:
    raw: str  # as written
    text: str | None  # as the program receives it; None when only bash knows (an expansion)
    glob: bool = False  # holds an unquoted * ? or [ that bash may expand to file names

    @property
    def static(self) -> bool:
        return self.text is not None

    def shown(self) -> str:
        """The word for rule matching and questions: its text, quoted if it needs to be; as
        written when it is not known before it runs."""
        if self.text is None:
            return self.raw
        return shlex.quote(self.text) if _NEEDS_QUOTES.search(self.text) or not self.text else self.text


def word_of(node: Node, home: str) -> Word:
    """The Word bash makes of `node` (a word, string, concatenation, number, expansion…)."""
    raw = node_text(node)
    value = _value(node, home)
    glob = value is not None and node.type in ("word", "concatenation") and bool(_GLOB_CHARS.search(raw))
    return Word(raw, value, glob)


def nested_commands(node: Node) -> Iterator[Node]:
    """The command or process substitutions inside `node` (not inside each other: the caller
    walks their statements, which finds those)."""
    if node.type in NESTED_COMMAND_NODES:
        yield node
        return
    for child in node.children:
        yield from nested_commands(child)


def _value(node: Node, home: str) -> str | None:
    kind = node.type
    if kind in DYNAMIC_NODES or _has_dynamic_part(node):
        return None
    if kind == "number":
        return node_text(node)
    if kind == "raw_string":
        return node_text(node)[1:-1]
    if kind == "string":
        parts = [
            _DOUBLE_QUOTE_ESCAPES.sub(r"\1", node_text(c))
            for c in node.children
            if c.type == "string_content"
        ]
        return "".join(parts).replace("\\\n", "")
    if kind == "word":
        return _plain_word(node_text(node), home)
    if kind == "concatenation":
        if _BRACE_EXPANSION.search(_unquoted_text(node)):
            return None  # {a,b} becomes two words; {1..3} three
        values = [
            _value(child, home) if index == 0 else _value_no_tilde(child)
            for index, child in enumerate(node.children)
        ]
        return None if any(v is None for v in values) else "".join(v for v in values if v is not None)
    return None


def _value_no_tilde(node: Node) -> str | None:
    """A later part of a concatenation: `~` is only expanded at a word's start."""
    return _value(node, home="") if not node_text(node).startswith("~") else _plain_escapes(node_text(node))


def _plain_word(raw: str, home: str) -> str | None:
    if _BRACE_EXPANSION.search(raw):
        return None
    if raw.startswith("~"):
        if raw != "~" and not raw.startswith("~/"):
            return None  # ~user, ~+ and ~-: another folder than we would guess
        if not home:
            return _plain_escapes(raw)
        return home + _plain_escapes(raw[1:])
    return _plain_escapes(raw)


def _plain_escapes(raw: str) -> str:
    return _ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), raw)


def _has_dynamic_part(node: Node) -> bool:
    return any(child.type in DYNAMIC_NODES or _has_dynamic_part(child) for child in node.children)


def _unquoted_text(node: Node) -> str:
    return "".join(node_text(child) for child in node.children if child.type == "word")


def node_text(node: Node) -> str:
    """The source text of `node`, as bash reads its bytes (any not UTF-8 kept as surrogates)."""
    data: bytes = node.text
    return data.decode("utf-8", "surrogateescape")
