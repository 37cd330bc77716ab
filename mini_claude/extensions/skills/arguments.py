"""`$ARGUMENTS` and `$1`…`$9` in a skill's or command's text, as Claude Code fills them: the words
after `/name`, whole or one by one (split as a shell would, quotes grouping words). A text with
neither placeholder gets the words after it, on an `ARGUMENTS:` line, so they are never lost."""

from __future__ import annotations

import re
import shlex

from mini_claude.core import prompts

_PLACEHOLDER = re.compile(r"\$(?:(ARGUMENTS)\b|([1-9])(?![0-9]))")


def substitute(text: str, arguments: str) -> str:
    """`text` with its placeholders filled in one pass (words that hold `$1` stay as they are)."""
    arguments = arguments.strip()
    words = split_words(arguments)

    def fill(match: re.Match[str]) -> str:
        if match.group(1):
            return arguments
        index = int(match.group(2)) - 1
        return words[index] if index < len(words) else ""

    filled, count = _PLACEHOLDER.subn(fill, text)
    if count == 0 and arguments:
        line = prompts.fill(prompts.load_toml("extensions.toml")["arguments_line"], arguments=arguments)
        filled = filled.rstrip("\n") + "\n\n" + line
    return filled


def split_words(arguments: str) -> list[str]:
    """The words as a shell splits them; with an unclosed quote, at spaces."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()
