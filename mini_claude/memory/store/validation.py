"""What a valid memory is: the one rule for files read from disk, the store's saves and the
model's writes, so a memory the store accepts always reads back whole and indexed."""

from __future__ import annotations

from collections.abc import Mapping

from mini_claude.core import prompts
from mini_claude.core.errors import InvalidMemory
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.frontmatter.codec import MAX_HEADER_BYTES, Frontmatter
from mini_claude.memory.provenance import KEPT_KEYS
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


def check_memory(
    name: str, description: str, memory_type: str, body: str, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The fields a memory is written with (`memory_fields`); InvalidMemory, saying why, when it
    breaks the rules of a valid memory. The one check: the writer asks it before asking anyone."""
    # Checked as given: a value that is not blank stays so in the file (`format` only folds line
    # breaks), and a type with a stray space is refused rather than trimmed. The size counts the
    # header as written: one too long to read back would be saved, yet missing from the index.
    given = {"name": name, "description": description, "type": memory_type}
    fields = memory_fields(name, description, memory_type, extra or {})
    header_bytes = len(frontmatter.format(fields, "").encode("utf-8", "surrogateescape"))
    if problem := memory_problem(Frontmatter(given, has_block=True), header_bytes=header_bytes):
        raise InvalidMemory(problem)
    if "\0" in body:  # it would read back as binary, and so never be recalled or shown
        raise InvalidMemory(prompts.notice("memory_holds_nul"))
    return fields


def memory_fields(name: str, description: str, memory_type: str, extra: Mapping[str, str]) -> dict[str, str]:
    """The fields a memory file is written with: name, description, type, then those of `extra`
    that are kept (paths, expires); anything else a writer put there is dropped."""
    kept = {key: value for key, value in extra.items() if key in KEPT_KEYS and value.strip()}
    return {"name": name, "description": description, "type": memory_type, **kept}
