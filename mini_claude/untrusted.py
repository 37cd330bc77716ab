"""Untrusted text (files, tool output, memories, the model's tool calls): wrapped in tags it cannot
break out of for the model, made inert before a terminal shows it to the user."""

from __future__ import annotations

import re
from functools import cache


@cache
def _tag_pattern(tag: str) -> re.Pattern[str]:
    # Matches opening and closing forms, tolerant of case and whitespace: "< /System-Reminder".
    return re.compile(r"<(\s*/?\s*)(" + re.escape(tag) + r")(?=[\s>/]|$)", re.IGNORECASE)


def neutralize(text: str, tag: str) -> str:
    """Make every `<tag` / `</tag` inside `text` inert by escaping its `<`."""
    return _tag_pattern(tag).sub(r"&lt;\1\2", text)


def wrap(tag: str, text: str, **attributes: str) -> str:
    """`<tag a="…">text</tag>` where the text cannot open or close `tag` itself."""
    attrs = "".join(f' {key}="{_attribute(value)}"' for key, value in attributes.items())
    return f"<{tag}{attrs}>\n{neutralize(text, tag)}\n</{tag}>"


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace("\n", " ")


def visible_text(text: str, keep: str = "") -> str:
    """`text` with every invisible character except those in `keep` written out (`\\x1b`,
    `\\u202e`): escape codes, carriage returns and bidi controls would otherwise act on the
    terminal, and could hide or reorder what the user is shown (a command awaiting approval)."""
    if text.isprintable():
        return text
    return "".join(
        char if char.isprintable() or char in keep else char.encode("unicode_escape").decode("ascii")
        for char in text
    )
