"""Memories as text for people: the `/memory` command and `mini-claude memory ...`."""

from __future__ import annotations

from mini_claude.memory.index import clean_inline
from mini_claude.memory.store import MemoryFile, MemoryStore

LIST_DESCRIPTION_MAX_CHARS = 100
NO_MEMORIES = "No memories saved yet."


def list_lines(store: MemoryStore) -> list[str]:
    """`N memories:` then `[type] name — description`; broken files flagged with the reason."""
    memories = store.scan()
    if not memories:
        return [NO_MEMORIES]
    good = [m for m in memories if m.problem is None]
    broken = [m for m in memories if m.problem is not None]
    lines = [f"{len(good)} memor{'y' if len(good) == 1 else 'ies'}:"]
    for memory in good:
        description = clean_inline(memory.description, LIST_DESCRIPTION_MAX_CHARS)
        warning = "  (warning: " + memory.warnings[0] + ")" if memory.warnings else ""
        lines.append(f"[{memory.type}] {clean_inline(memory.name, 80)} — {description}{warning}")
    for memory in broken:
        lines.append(
            f"[broken] {memory.file_name} — {memory.problem} (left out of the index; fix or delete it)"
        )
    return lines


class NameNotFound(LookupError):
    """The message says which names exist or which ones matched."""


def resolve(store: MemoryStore, query: str) -> MemoryFile:
    """The one memory `query` names (by name or file name); a clear error otherwise."""
    query = query.strip()
    if not query:
        raise NameNotFound("Give a memory's name or file name (see /memory for the list).")
    matches = store.find(query)
    if not matches:
        raise NameNotFound(f"No memory named {query!r} (see /memory for the list).")
    if len(matches) > 1:
        names = ", ".join(f"{m.name!r} ({m.file_name})" for m in matches[:10])
        more = f" and {len(matches) - 10} more" if len(matches) > 10 else ""
        raise NameNotFound(f"{query!r} matches {len(matches)} memories: {names}{more}. Use the file name.")
    return matches[0]


def show_text(store: MemoryStore, memory: MemoryFile) -> str:
    text, _ = store.read_text(memory)
    return text
