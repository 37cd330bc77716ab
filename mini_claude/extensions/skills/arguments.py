"""`$ARGUMENTS` and `$1`…`$9` in a skill's or command's text, as Claude Code fills them: the words
after `/name`, whole or one by one (split as a shell would, quotes grouping words). A text with
neither placeholder gets the words after it, on an `ARGUMENTS:` line, so they are never lost."""

from __future__ import annotations

import re
import shlex

from mini_claude.core.prompts import extension_text

_PLACEHOLDER = re.compile(r"\$(?:(ARGUMENTS)\b|([1-9])(?![0-9]))")


def substitute(text: str, arguments: str) -> str:
    """`text` with its placeholders filled in one pass (words that hold `$1` stay as they are)."""
    filled, count = fill_placeholders(text, arguments)
    return with_arguments_line(filled, count, arguments)


def fill_placeholders(text: str, arguments: str) -> tuple[str, int]:
    """`text` with its placeholders filled, and how many there were (no `ARGUMENTS:` line: a
    caller filling a text piece by piece adds it once, with `with_arguments_line`)."""
    arguments = arguments.strip()
    words = split_words(arguments)

    def fill(match: re.Match[str]) -> str:
        if match.group(1):
            return arguments
        index = int(match.group(2)) - 1
        return words[index] if index < len(words) else ""

    return _PLACEHOLDER.subn(fill, text)


def with_arguments_line(filled: str, placeholders: int, arguments: str) -> str:
    """`filled` with the arguments on a line of their own when it had no placeholder for them."""
    arguments = arguments.strip()
    if placeholders or not arguments:
        return filled
    line = extension_text("arguments_line", arguments=arguments)
    return filled.rstrip("\n") + "\n\n" + line


def split_words(arguments: str) -> list[str]:
    """The words as a shell splits them; with an unclosed quote, at spaces."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()
