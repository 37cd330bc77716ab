"""MEMORY.md: one line per memory, derived from the files, and its bounded form for the prompt."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from urllib.parse import quote

from mini_claude.core import prompts
from mini_claude.core.frontmatter.codec import fold_value
from mini_claude.memory.store.memory_file import MemoryFile

INDEX_TITLE = "# Memory index"
INDEX_NAME_MAX_CHARS = 80
INDEX_DESCRIPTION_MAX_CHARS = 150  # with the name, keeps each entry under ~200 chars
PROMPT_INDEX_MAX_LINES = 200
PROMPT_INDEX_MAX_BYTES = 25_000

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]()<>#|])")
# Zero-width, bidi controls and other invisible format characters: they can disguise text.
_INVISIBLE_CATEGORIES = {"Cc", "Cf", "Co", "Cs"}


def clean_inline(text: str, max_chars: int) -> str:
    """One visible line: newlines folded, invisible and bidi characters removed, length bounded."""
    visible = fold_value(text)
    # isprintable() is False for every invisible category (and a few more): a quick check first.
    if not visible.isprintable():
        visible = "".join(ch for ch in visible if unicodedata.category(ch) not in _INVISIBLE_CATEGORIES)
    visible = " ".join(visible.split())
    if len(visible) > max_chars:
        visible = visible[: max_chars - 1].rstrip() + "…"
    return visible


def index_line(memory: MemoryFile) -> str:
    name = _MARKDOWN_SPECIAL.sub(r"\\\1", clean_inline(memory.name, INDEX_NAME_MAX_CHARS))
    description = _MARKDOWN_SPECIAL.sub(
        r"\\\1", clean_inline(memory.description, INDEX_DESCRIPTION_MAX_CHARS)
    )
    # A hand-made file name may hold a line break: percent-encode it so the entry stays one line.
    target = memory.file_name
    if not target.isprintable():
        target = "".join(
            ch if ch == " " or ch.isprintable() else quote(ch, errors="surrogateescape") for ch in target
        )
    if re.search(r"[\s()<>]", target):
        target = "<" + target.replace("<", "%3C").replace(">", "%3E") + ">"
    return f"- **[{name}]({target})** ({memory.type}) — {description}"


def render_index(memories: Iterable[MemoryFile], line: Callable[[MemoryFile], str] = index_line) -> str:
    """MEMORY.md's text; `line` may hand back lines made earlier (it must equal index_line)."""
    return "\n".join([INDEX_TITLE, *(line(m) for m in memories)]) + "\n"


def index_for_prompt(index_text: str) -> str:
    """The index within PROMPT_INDEX_MAX_LINES, then PROMPT_INDEX_MAX_BYTES (cut at a line end)."""
    lines = index_text.splitlines()
    cut_by_lines = len(lines) > PROMPT_INDEX_MAX_LINES
    kept = lines[:PROMPT_INDEX_MAX_LINES]
    text = "\n".join(kept)
    cut_by_bytes = len(text.encode("utf-8")) > PROMPT_INDEX_MAX_BYTES
    if cut_by_bytes:
        head = text.encode("utf-8")[:PROMPT_INDEX_MAX_BYTES].decode("utf-8", errors="ignore")
        text = head.rsplit("\n", 1)[0] if "\n" in head else ""
    if cut_by_lines or cut_by_bytes:
        shown = text.count("\n") + 1 if text else 0
        text += "\n\n" + prompts.notice(
            "memory_index_truncated",
            shown=shown,
            total=len(lines),
            max_lines=PROMPT_INDEX_MAX_LINES,
            max_bytes=PROMPT_INDEX_MAX_BYTES,
        )
    return text
