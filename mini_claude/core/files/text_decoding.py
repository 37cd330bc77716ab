"""The bytes of a text file as text for a prompt or a tool result, the one way: a byte order mark
is honoured (UTF-8, UTF-16 or UTF-32, either order), a UTF-16 file without one is recognised by
its zero bytes, anything else is UTF-8. Text that is not is decoded with U+FFFD and a warning,
or, when it looks binary, skipped with one: a UTF-16 `CLAUDE.md` must not reach the model as
NUL-interleaved garbage, nor a Latin-1 memory lose its accents without a word."""

from __future__ import annotations

import codecs
from typing import NamedTuple

SNIFF_BYTES = 8 * 1024  # how much of a file decides "binary or text"
MAX_UNDECODABLE_RATIO = 0.3  # above this share of invalid UTF-8 in the sniffed bytes: binary
# BOM-less UTF-16: at least this share of the pairs have their high byte zero (Latin text), and
# at most UTF16_STRAY_ZERO_SHARE their low byte.
UTF16_ZERO_SHARE = 0.6
UTF16_STRAY_ZERO_SHARE = 0.05
UTF16_PRINTABLE_SHARE = 0.95  # of its characters, printable or layout, for it to be taken as text

MARK_MAX_BYTES = 4  # the longest byte order mark (UTF-32's)
# Longest first: UTF-32 LE's mark starts with UTF-16 LE's.
_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32 LE"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32 BE"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16 LE"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16 BE"),
)


class DecodedText(NamedTuple):
    text: str | None  # None: skipped, it looks binary
    encoding: str  # as people name it: "UTF-8", "UTF-16 LE"
    # One line, naming no file (the caller puts "<file>: " before it): why skipped, or how read.
    warning: str | None = None


def decode_text(data: bytes, *, complete: bool = True, guess: bool = True) -> DecodedText:
    """`data` (a whole file, or its first bytes when not `complete`: a character cut at the end is
    left out, not replaced) as text. See the module. Without `guess`, only a BOM says what it is
    (else UTF-8, never binary): for a reader that must agree with one that sees a few bytes."""
    for mark, codec, name in _MARKS:
        if data.startswith(mark):
            if codec == "utf-8":  # text by its own say-so: not sniffed for invalid bytes
                decoded = _utf8_text(data, len(mark), complete)
            else:
                decoded = _decoded(data[len(mark) :], codec, name, complete)
            # A mark before what is no text in that encoding (UTF-16 after a UTF-8 mark, binary):
            # NUL characters are no text's, and reached the model interleaved with the letters.
            if "\0" in (decoded.text or "")[:SNIFF_BYTES]:
                return DecodedText(
                    None,
                    "binary",
                    f"looks like binary data (NUL characters after its {name} byte order mark): not read",
                )
            return decoded
    head = data[:SNIFF_BYTES]
    if not guess:
        return _utf8_text(data, 0, complete)
    if b"\0" in head:
        utf16 = _bomless_utf16(head)
        if utf16 is not None:
            codec, name = utf16
            decoded = _decoded(data, codec, name, complete)
            if decoded.warning is None and _mostly_printable(decoded.text or ""):
                return decoded._replace(warning=f"no byte order mark: read as {name}")
        return DecodedText(None, "binary", "looks like binary data (it holds NUL bytes): not read")
    if _replaced(head, complete and len(head) == len(data)) > MAX_UNDECODABLE_RATIO * len(head):
        return DecodedText(None, "binary", "looks like binary data (mostly not UTF-8): not read")
    return _utf8_text(data, 0, complete)


def _utf8_text(data: bytes, start: int, complete: bool) -> DecodedText:
    """`data[start:]` as UTF-8; bytes that are not become U+FFFD, and a warning counts them."""
    body = data[start:]
    try:
        return DecodedText(_utf8(body, complete, "strict"), "UTF-8")
    except UnicodeDecodeError as error:
        first_bad = start + error.start
    places = _places(_replaced(body, complete))
    warning = (
        f"not valid UTF-8: shown with U+FFFD in {places} (the first at byte offset {first_bad:,}); "
        "save it as UTF-8 to read it whole"
    )
    return DecodedText(_utf8(body, complete, "replace"), "UTF-8", warning)


def _replaced(data: bytes, complete: bool) -> int:
    """How many U+FFFD decoding `data` as UTF-8 puts in (those it holds already not counted)."""
    return _utf8(data, complete, "replace").count("\ufffd") - _utf8(data, complete, "ignore").count("\ufffd")


def _utf8(data: bytes, complete: bool, errors: str) -> str:
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    return decoder.decode(data, final=complete)


def _decoded(data: bytes, codec: str, name: str, complete: bool) -> DecodedText:
    decoder = codecs.getincrementaldecoder(codec)("strict")
    try:
        return DecodedText(decoder.decode(data, final=complete), name)
    except UnicodeDecodeError as error:
        text = codecs.getincrementaldecoder(codec)("replace").decode(data, final=complete)
        warning = f"not valid {name} from byte offset {error.start:,}: shown with U+FFFD there"
        return DecodedText(text, name, warning)


def _bomless_utf16(head: bytes) -> tuple[str, str] | None:
    """UTF-16 without a mark, told by its zero bytes: text mostly in Latin script has one in most
    pairs, always on the same side (the high byte). Else None."""
    pairs = len(head) // 2
    if pairs < 2:
        return None
    even, odd = head[0 : pairs * 2 : 2].count(0), head[1 : pairs * 2 : 2].count(0)
    if odd >= UTF16_ZERO_SHARE * pairs and even <= UTF16_STRAY_ZERO_SHARE * pairs:
        return "utf-16-le", "UTF-16 LE"
    if even >= UTF16_ZERO_SHARE * pairs and odd <= UTF16_STRAY_ZERO_SHARE * pairs:
        return "utf-16-be", "UTF-16 BE"
    return None


def _places(count: int) -> str:
    return "1 place" if count == 1 else f"{count:,} places"


def _mostly_printable(text: str) -> bool:
    sample = text[: SNIFF_BYTES // 2]
    shown = sum(char.isprintable() or char in "\n\r\t" for char in sample)
    return shown >= UTF16_PRINTABLE_SHARE * len(sample)
