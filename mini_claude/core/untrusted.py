"""Untrusted text (files, tool output, memories, the model's tool calls): wrapped in tags it cannot
break out of for the model, quoted where a prompt names it, cleaned of what UTF-8 cannot carry
where the model server sends it, made inert before a terminal shows it to the user."""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import regex


@cache
def _tag_pattern(tag: str) -> re.Pattern[str]:
    # Matches opening and closing forms, tolerant of case and whitespace: "< /System-Reminder".
    return re.compile(r"<(\s*/?\s*)(" + re.escape(tag) + r")(?=[\s>/]|$)", re.IGNORECASE)


def neutralize(text: str, tag: str) -> str:
    """Make every `<tag` / `</tag` inside `text` inert by escaping its `<`."""
    return _tag_pattern(tag).sub(r"&lt;\1\2", text)


def wrap(tag: str, text: str, **attributes: str) -> str:
    """`<tag a="…">text</tag>` where the text cannot open or close `tag` itself."""
    attrs = "".join(f' {key}="{attribute(value)}"' for key, value in attributes.items())
    return f"<{tag}{attrs}>\n{neutralize(text, tag)}\n</{tag}>"


def attribute(value: str) -> str:
    """`value` (a path, a name) as it may stand between double quotes in a tag or a prompt line:
    it cannot end the quotes, open or close a tag, nor start a line of its own. `&"<>` become
    character references; line breaks and every other control or invisible character are written
    out (`\\n`, `\\u2028`), as a terminal would be shown them."""
    quoted = value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    return visible_text(quoted)


def encodable(text: str) -> str:
    """`text` with every code point UTF-8 cannot encode (a lone surrogate, as a server may send
    in a JSON `\\ud800` escape) replaced by U+FFFD; a surrogate pair split in two is joined.

    The conversation is re-sent whole on every request and saved to the transcript: one such
    character kept there breaks every later request and every `-c` of the session."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def encodable_value(value: Any) -> Any:
    """A JSON value (a tool call's input, a transcript record) with `encodable` applied to every
    string in it, object keys too. Recursive: callers bound the depth (tool input's nesting cap,
    the transcript loader's RecursionError)."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {
            encodable(key) if isinstance(key, str) else key: encodable_value(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [encodable_value(item) for item in value]
    return value


# Shown as they are although str.isprintable() says otherwise: spaces (no-break, ideographic, …)
# and the joiners that emoji and some scripts are built with. None moves the cursor or reorders text.
_SHOWN_AS_IS_CATEGORIES = {"Zs"}
_SHOWN_AS_IS = frozenset("\u200c\u200d")
# Symbols (So) a font draws as blank, though Unicode gives them no property that says so.
BLANK_DRAWN_SYMBOLS = "\u2800\U0001d159"  # Braille pattern blank, musical symbol null notehead
# Drawn as nothing, or as a blank: the one definition, by Unicode properties (a `regex` class).
# Whitespace (Zs, Zl, Zp), controls (Cc), format characters (Cf: zero-width, bidi, U+FFF9…),
# every Default_Ignorable_Code_Point (soft hyphen, the Hangul fillers U+115F/1160/3164/FFA0,
# U+034F, U+17B4/17B5, variation selectors, tags) and the blank-drawn symbols. Used by the
# terminal gate, JSON output, the blank-run marker of questions and the secret check.
DRAWN_AS_NOTHING_CLASS = (
    r"\p{Zs}\p{Zl}\p{Zp}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}" + BLANK_DRAWN_SYMBOLS
)
# Of those, the ones str.isprintable() lets through, which the gate must catch itself; variation
# selectors (U+FE0F makes ❤️ an emoji) stay: text needs them and they hide no character.
_PRINTABLE_BLANK = rf"(?V1)[[{DRAWN_AS_NOTHING_CLASS}]--[\p{{Zs}}\p{{Variation_Selector}}]]"
MULTILINE_KEEP = "\n\t"  # what a reply, a memory body or a command keeps of its layout


@cache
def unicode_pattern(source: str) -> regex.Pattern[str]:
    """`source` compiled by the `regex` library, which knows Unicode properties (imported on
    first use: ASCII text never needs it)."""
    import regex

    return regex.compile(source)


def shown_as_is(text: str) -> bool:
    """Whether `visible_text` leaves `text` unchanged: printable, and no printable blank-drawn
    character in it (the fast path of the gate and of JSON output)."""
    if not text.isprintable():
        return False
    return text.isascii() or unicode_pattern(_PRINTABLE_BLANK).search(text) is None


def visible_text(text: str, keep: str = "") -> str:
    """`text` as a terminal may show it: every control character (C0 but those in `keep`, DEL,
    C1), bidi control and other invisible character written out (`\\x1b`, `\\x9b`, `\\u202e`).

    The one gate between outside text (the model's, a tool's, a file's, the server's) and the
    user's terminal: raw, an escape code could clear the screen, rewrite the clipboard (OSC 52),
    or hide and reorder what the user is shown. Ordinary text, wide characters, emoji and spaces
    pass unchanged. Undecodable bytes (surrogate escapes) become `\\xHH`, as in `visible_path`."""
    rest = text
    for char in keep:
        rest = rest.replace(char, "")
    if shown_as_is(rest):
        return text  # the common case, at C speed
    return "".join(char if char in keep or _shown_as_is(char) else _escaped(char) for char in text)


def visible_lines(text: str) -> str:
    """A multi-line text (a reply, a memory body) made visible, line breaks and tabs kept;
    Windows line ends count as line breaks, a lone carriage return (which would let a line
    overwrite itself) is written out."""
    return visible_text(text.replace("\r\n", "\n"), keep=MULTILINE_KEEP)


def must_write_out(char: str) -> bool:
    """Whether `visible_text` writes `char` out rather than showing it: the one definition, which
    print mode's JSON output uses too."""
    return not _shown_as_is(char)


def _shown_as_is(char: str) -> bool:
    if char in _SHOWN_AS_IS or unicodedata.category(char) in _SHOWN_AS_IS_CATEGORIES:
        return True
    return shown_as_is(char)


def _escaped(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return char.encode("unicode_escape").decode("ascii")
