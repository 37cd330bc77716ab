"""Memory file names: `{type}_{slug}.md`, readable in any script, never a path trick."""

from __future__ import annotations

import hashlib
import unicodedata

MEMORY_TYPES = ("user", "feedback", "project", "reference")
SLUG_MAX_BYTES = 120  # keeps `{type}_{slug}_NN.md` far below the 255-byte file name limit
INDEX_FILE = "MEMORY.md"
MEMORY_SUFFIX = ".md"
UNKNOWN_CHAR = "\ufffd"  # what a byte that is not UTF-8 reads as


def name_key(name: str) -> str:
    """Two names that differ only by case, width or spacing name the same memory."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


def matches_garbled_name(stored: str, typed: str, *, prefix: bool) -> bool:
    """Whether `typed` spells `stored` (or its start), each U+FFFD in `stored` (a byte that was not
    UTF-8: a Latin-1 "é", say) standing for any one character. Compared character by character,
    case-insensitively: no casefold that changes the length (ß → ss) can put the two out of step.
    At least one real character must match."""
    if UNKNOWN_CHAR not in stored:
        return False
    stored_chars, typed_chars = _spaced(stored), _spaced(typed)
    if len(typed_chars) > len(stored_chars):
        return False
    if not prefix and len(typed_chars) != len(stored_chars):
        return False
    compared = stored_chars[: len(typed_chars)]
    if compared.count(UNKNOWN_CHAR) == len(compared):
        return False  # nothing real matched: a wholly garbled name must not answer to every word
    return all(
        s == UNKNOWN_CHAR or s.casefold() == t.casefold() for s, t in zip(compared, typed_chars, strict=True)
    )


def _spaced(name: str) -> str:
    """`name_key` without the casefold: NFKC, whitespace runs as one space, ends stripped."""
    return " ".join(unicodedata.normalize("NFKC", name).split())


def slugify(name: str) -> str:
    """Letters and digits of any script, joined by `_`; bounded; never empty, `.` or `..`."""
    words: list[str] = []
    current: list[str] = []
    for char in unicodedata.normalize("NFKC", name).casefold():
        # Combining marks stay with their letter (Devanagari vowel signs, accents).
        if char.isalnum() or (current and unicodedata.category(char).startswith("M")):
            current.append(char)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    slug = _cut_utf8("_".join(words), SLUG_MAX_BYTES).strip("_")
    if not slug:
        slug = "memory_" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return slug


def memory_file_name(memory_type: str, name: str, taken: set[str]) -> str:
    """`{type}_{slug}.md`, with `_2`, `_3`… when another memory already has that file name."""
    stem = f"{memory_type}_{slugify(name)}"
    candidate = stem + MEMORY_SUFFIX
    number = 2
    while candidate.casefold() in taken:
        candidate = f"{stem}_{number}{MEMORY_SUFFIX}"
        number += 1
    return candidate


def is_memory_file_name(file_name: str) -> bool:
    """Memory files are visible top-level `.md` files other than the index."""
    return file_name.endswith(MEMORY_SUFFIX) and not file_name.startswith(".") and file_name != INDEX_FILE


def _cut_utf8(text: str, max_bytes: int) -> str:
    return text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
