"""The text the secret rules read: what a terminal, a browser or a markdown viewer would show as a
token is checked as that token, whatever it was written with.

- escape sequences (`\\x1b[0m`, OSC strings) are dropped, and a text holding any is also read with
  only their ESC dropped (a secret inside an OSC title is still in the file);
- controls (C0 but line break and tab, DEL, C1 such as NEL) and every character drawn as nothing
  but spaces (untrusted's one definition) are dropped, compatibility forms folded (NFKC, so
  `ＰＡＳＳＷＯＲＤ` and `𝗀𝗁𝗉_` are ASCII) and combining marks dropped;
- Cyrillic and Greek letters that look like Latin ones are read as Latin inside a word that also
  holds ASCII letters or digits (`АKIA…` with a Cyrillic A), so whole Russian words stay Russian;
- markdown backslash escapes (`ghp\\_…`) and bold markers (`**ghp_**…`), numeric HTML entities
  (`&#95;`), percent-encoded unreserved characters (`%5F`) and joined string literals
  (`"ghp_" + "…"`) are undone.
"""

from __future__ import annotations

import re
import unicodedata

from mini_claude.core.untrusted import DRAWN_AS_NOTHING_CLASS
from mini_claude.safety.secrets.providers import LazyPattern

# ECMA-48 escape sequences, 7- and 8-bit: CSI (`\x1b[0m`, `\x9b…`), strings (OSC, DCS, APC…) up
# to their terminator, and two-character escapes (`\x1b(B`, `\x1bc`). Their text is never shown.
_ESCAPE_SEQUENCE = LazyPattern(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]"
)
_ASCII_CONTROLS = LazyPattern(r"[\x00-\x08\x0b-\x1f\x7f]+")  # all but line break and tab
# Drawn as nothing (untrusted's definition: Cc, Cf, Zl, Zp, Default_Ignorable, U+2800…) but the
# spaces, line break and tab the rules read as separators.
_INVISIBLE = LazyPattern(rf"(?V1)[[{DRAWN_AS_NOTHING_CLASS}]--[\p{{Zs}}\n\t]]+", unicode_properties=True)
_COMBINING = LazyPattern(r"\p{Mn}+", unicode_properties=True)
_MARKDOWN_ESCAPE = LazyPattern(r"\\([!#*+\-.<>_`|~\[\](){}])")
_NUMERIC_ENTITY = LazyPattern(r"&#(?:[xX]([0-9a-fA-F]{1,6})|(\d{1,7}));")
# RFC 3986 unreserved characters mean the same written as %XX; a reserved one (%40 for @ in a
# URL password) is left as it is, since decoding it would change what the text says.
_PERCENT_UNRESERVED = LazyPattern(r"%(2[dDeE]|3[0-9]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])")
_JOINED_LITERALS = LazyPattern(r"([\"'])[ \t]*\+[ \t]*\1")  # "ghp_" + "R8s…": one string
# Cyrillic and Greek letters drawn like Latin ones (Unicode's confusables, the common part).
_LOOK_ALIKES = str.maketrans(
    "АВЕЅІЈКМНОРСТХУаеѕіјорсухԁһԛԝӏΑΒΕΖΗΙΚΜΝΟΡΤΥΧοινκρυχ",
    "ABESIJKMHOPCTXYaesijopcyxdhqwlABEZHIKMNOPTYXoivkpux",
)
_LOOK_ALIKE = LazyPattern("[АВЕЅІЈКМНОРСТХУаеѕіјорсухԁһԛԝӏΑΒΕΖΗΙΚΜΝΟΡΤΥΧοινκρυχ]")
_WORD = LazyPattern(r"[\w-]+")


def mentions(lowered: str, words: tuple[str, ...]) -> bool:
    """Whether lower-cased text holds one of `words`: a substring test per word is far cheaper
    than a case-insensitive regex alternation, which Python tries at every position."""
    return any(word in lowered for word in words)


def variants(text: str) -> tuple[str, ...]:
    """`text` as the rules read it (see the module's docstring); two readings when it holds escape
    sequences: without them (what a terminal shows) and with only their introducers dropped."""
    text = text.replace('\\"', '"').replace("\\'", "'")  # JSON written inside a JSON string
    if "\x1b" not in text and "\x9b" not in text:
        return (_normalized(text),)
    return (
        _normalized(_ESCAPE_SEQUENCE.pattern.sub("", text)),
        _normalized(text.replace("\x1b", "").replace("\x9b", "")),
    )


def _normalized(text: str) -> str:
    text = text.replace("\r\n", "\n")
    if text.isascii():  # ASCII has controls too: only the check for them is cheaper
        text = _ASCII_CONTROLS.pattern.sub("", text)
    else:
        text = _INVISIBLE.pattern.sub("", text)
        if not unicodedata.is_normalized("NFKC", text):
            text = _INVISIBLE.pattern.sub("", unicodedata.normalize("NFKC", text))  # a full-width filler
        text = _COMBINING.pattern.sub("", text)
        if _LOOK_ALIKE.pattern.search(text):
            text = _WORD.pattern.sub(_read_as_latin, text)
    if "\\" in text:
        text = _MARKDOWN_ESCAPE.pattern.sub(r"\1", text)
    if "&#" in text:
        text = _NUMERIC_ENTITY.pattern.sub(_entity, text)
    if "%" in text:
        text = _PERCENT_UNRESERVED.pattern.sub(lambda match: chr(int(match[1], 16)), text)
    text = text.replace("**", "")  # markdown bold: `**ghp_**R8s…` is drawn as one token
    if "+" in text:
        text = _JOINED_LITERALS.pattern.sub("", text)
    return text


def _read_as_latin(match: re.Match[str]) -> str:
    """A word holding a look-alike and an ASCII letter or digit is read as Latin; a word of
    Cyrillic or Greek alone is left as it is."""
    word = match.group(0)
    if word.isascii() or not _LOOK_ALIKE.pattern.search(word):
        return word
    if any(char.isascii() and char.isalnum() for char in word):
        return word.translate(_LOOK_ALIKES)
    return word


def _entity(match: re.Match[str]) -> str:
    code = int(match[1], 16) if match[1] else int(match[2])
    return chr(code) if 0x20 < code < 0x7F else match.group(0)  # a printable ASCII character only
