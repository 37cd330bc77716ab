"""Untrusted text (files, tool output, memories, the model's tool calls): wrapped in tags it cannot
break out of for the model, quoted where a prompt names it, cleaned of what UTF-8 cannot carry
where the model server sends it, made inert before a terminal shows it to the user."""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import regex

# The tag whose text the model takes as the harness speaking (recalled memories come in one):
# no wrapped text may open or close it, whatever tag wraps it.
REMINDER_TAG = "system-reminder"
# What folds to "<" (NFKC: U+FE64 small, U+FF1C full-width; the tag character U+E003C read as
# the ASCII it stands for): only text holding one of them can hold a tag or a look-alike.
_OPENERS = re.compile("[<\ufe64\uff1c\U000e003c]")
_TAG_CHARACTERS = range(0xE0020, 0xE007F)  # U+E0020–U+E007E: ASCII spelled in invisible tags


@cache
def _tag_pattern(tag: str) -> re.Pattern[str]:
    # Matches opening and closing forms, tolerant of case and whitespace: "< /System-Reminder".
    return re.compile(r"<(\s*/?\s*)(" + re.escape(tag) + r")(?=[\s>/]|$)", re.IGNORECASE)


def neutralize(text: str, tag: str) -> str:
    """Make every `<tag` / `</tag` inside `text` inert by escaping its `<`: also every look-alike,
    anything that reads as one once folded (NFKC) and rid of characters drawn as nothing
    (`</system-reminder\u200b>`, a full-width `＜/…＞`, `<\u200b/…>`, `</ｓｙｓｔｅｍ-reminder>`,
    tag characters spelling it), whose `<`-like character becomes `&lt;`."""
    pattern = _tag_pattern(tag)
    if text.isascii():
        return pattern.sub(r"&lt;\1\2", text)
    if not _OPENERS.search(text):
        return text
    folding = list(unicode_pattern(_MAY_FOLD).finditer(text))
    if not folding:
        return pattern.sub(r"&lt;\1\2", text)  # no character reads as another: as written
    folded, origin = _folded(text, [found.start() for found in folding])
    pieces, done = [], 0
    for match in pattern.finditer(folded):
        opener = origin[match.start()]  # the one character that folded to "<"
        pieces += [text[done:opener], "&lt;"]
        done = opener + 1
    return "".join(pieces) + text[done:] if pieces else text


def _folded(text: str, changing: list[int]) -> tuple[str, list[int]]:
    """`text` as a tag reader may take it (the characters at `changing` folded: see `_fold`),
    and where each of its characters came from in `text`."""
    parts: list[str] = []
    origin: list[int] = []
    done = 0
    for index in changing:
        folded = _fold(text[index])
        parts += [text[done:index], folded]
        origin.extend(range(done, index))
        origin.extend([index] * len(folded))
        done = index + 1
    parts.append(text[done:])
    origin.extend(range(done, len(text)))
    return "".join(parts), origin


@lru_cache(maxsize=4096)
def _fold(char: str) -> str:
    """One character folded: a tag character as its ASCII, a character drawn as nothing (but
    whitespace, which tags may hold) removed, anything else in its NFKC form."""
    if ord(char) in _TAG_CHARACTERS:
        return chr(ord(char) - 0xE0000)
    if drawn_as_nothing(char) and not char.isspace():
        return ""
    return unicodedata.normalize("NFKC", char)


def wrap(tag: str, text: str, **attributes: str) -> str:
    """`<tag a="…">text</tag>` where the text cannot open or close `tag` itself, nor fake a
    `<system-reminder>` inside it."""
    attrs = "".join(f' {key}="{attribute(value)}"' for key, value in attributes.items())
    return f"<{tag}{attrs}>\n{contained(text, tag)}\n</{tag}>"


def contained(text: str, tag: str) -> str:
    """`text` as it may stand inside `<tag>…</tag>` (which a prompt template writes around it):
    it cannot open or close `tag`, nor fake a `<system-reminder>` inside it."""
    inert = neutralize(text, tag)
    return inert if tag == REMINDER_TAG else neutralize(inert, REMINDER_TAG)


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
# What a tag reader may read as another character (`_fold`): NFKC changes it or may (a
# combining mark), or it draws nothing and is no whitespace (tag characters among them).
_MAY_FOLD = rf"(?V1)[\p{{NFKC_QC=N}}\p{{NFKC_QC=M}}[[{DRAWN_AS_NOTHING_CLASS}]--\p{{White_Space}}]]"
MULTILINE_KEEP = "\n\t"  # what a reply, a memory body or a command keeps of its layout
# What the gate shows as it is although it draws nothing: text needs them (scripts, emoji), but
# where the user approves text they are marked (`marked_text`).
_LET_THROUGH_UNSEEN = r"[\p{Variation_Selector}\u200c\u200d]"
# An emoji and what may follow it drawn as part of it: one presentation selector or skin tone,
# then joiners each followed by a pictograph (`👨‍👩‍👧`). Elsewhere those characters are marked.
_EMOJI_SEQUENCE = (
    r"\p{Emoji}(?:[\ufe0e\ufe0f]|\p{Emoji_Modifier})?"
    r"(?:\u200d\p{Extended_Pictographic}(?:\ufe0f|\p{Emoji_Modifier})?)*"
)


@cache
def unicode_pattern(source: str) -> regex.Pattern[str]:
    """`source` compiled by the `regex` library, which knows Unicode properties (imported on
    first use: ASCII text never needs it)."""
    import regex

    return regex.compile(source)


def drawn_as_nothing(char: str) -> bool:
    """Whether a terminal draws `char` as nothing or as a blank (see DRAWN_AS_NOTHING_CLASS)."""
    return unicode_pattern(f"[{DRAWN_AS_NOTHING_CLASS}]").match(char) is not None


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


def marked_text(text: str, keep: str = "") -> str:
    """`text` for what the user approves or reviews (questions, diffs, memory views): as
    `visible_text`, and the characters drawn as nothing that the gate lets through (variation
    selectors, the joiners U+200C/U+200D) written out too, wherever they are: between two letters
    they could carry a payload through text the user approved. Spaces, which draw a blank, what
    `keep` keeps, and the selector and joiners that build an emoji (`❤️`, `👨‍👩‍👧`: one selector
    after an emoji, joiners between pictographs) are shown as they are."""
    hidden = unicode_pattern(_LET_THROUGH_UNSEEN)
    if text.isascii() or not hidden.search(text):
        return visible_text(text, keep)  # the common case, at C speed
    pattern = unicode_pattern(f"({_EMOJI_SEQUENCE})|{_LET_THROUGH_UNSEEN}")
    marked = pattern.sub(lambda found: found.group() if found.group(1) else _escaped(found.group()), text)
    return visible_text(marked, keep)


def marked_lines(text: str) -> str:
    """A multi-line text the user reviews (a memory shown whole): `marked_text`, line breaks and
    tabs kept, `\\r\\n` taken as a line break as `visible_lines` does."""
    return marked_text(text.replace("\r\n", "\n"), keep=MULTILINE_KEEP)


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
