"""Memory file names: `{type}_{slug}.md`, readable in any script, never a path trick."""

from __future__ import annotations

import hashlib
import unicodedata

MEMORY_TYPES = ("user", "feedback", "project", "reference")
SLUG_MAX_BYTES = 120  # keeps `{type}_{slug}_NN.md` far below the 255-byte file name limit
INDEX_FILE = "MEMORY.md"
MEMORY_SUFFIX = ".md"


def name_key(name: str) -> str:
    """Two names that differ only by case, width or spacing name the same memory."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


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
