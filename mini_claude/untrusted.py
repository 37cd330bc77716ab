"""Wrapping untrusted text (files, tool output, memories) in tags it cannot break out of."""

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
