"""What a valid memory is: the one rule for files read from disk, the store's saves and the
model's writes, so a memory the store accepts always reads back whole and indexed."""

from __future__ import annotations

from mini_claude.core import prompts
from mini_claude.core.frontmatter.codec import MAX_HEADER_BYTES, Frontmatter
from mini_claude.memory.store.naming import MEMORY_TYPES

MEMORY_FIELDS = ("name", "description", "type")


def memory_problem(header: Frontmatter, *, header_bytes: int = 0) -> str | None:
    """Why a file with this header is not a valid memory (one line), or None when it is one.

    A memory starts with a frontmatter block (--- … ---) holding a name, a description and a
    type, none of them blank, the type one of MEMORY_TYPES, and the block within MAX_HEADER_BYTES.
    `header_bytes` is the size of a header about to be written; a file's header is read only
    that far, so a longer one on disk already arrives here as no block (read_header says why).
    """
    if not header.has_block:
        return header.warnings[0] if header.warnings else prompts.notice("memory_no_frontmatter")
    missing = [key for key in MEMORY_FIELDS if not header.fields.get(key, "").strip()]
    if missing:
        return prompts.notice("memory_lacks_fields", fields=", ".join(missing))
    if (memory_type := header.fields["type"]) not in MEMORY_TYPES:
        return prompts.notice("memory_bad_type", type=repr(memory_type), types=", ".join(MEMORY_TYPES))
    if header_bytes > MAX_HEADER_BYTES:
        return prompts.notice("memory_header_too_big", header_bytes=header_bytes, limit=MAX_HEADER_BYTES)
    return None
