"""`memory search`: the memories of every scope that match some words, best first, ranked as recall
ranks them (ranking.py), each with its scope and the line of its text that matches best.

Scopes are searched one folder each and their results merged by score; a scope's scores are scaled
to its own best match, so two scopes' best memories stand side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.paths import visible_path
from mini_claude.memory.recall.ranking import ranking_for
from mini_claude.memory.recall.terms import terms
from mini_claude.memory.store.index import clean_inline
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore

DEFAULT_LIMIT = 10
SNIPPET_MAX_CHARS = 120
SNIPPET_READ_BYTES = 8192  # of each memory found (a memory is a note; recall reads 4 KB of it)
NAME_MAX_CHARS = 80
DESCRIPTION_MAX_CHARS = 100


@dataclass(frozen=True)
class MemoryFolder:
    """One scope's memories: `project` (today's only scope), later `user` and `team`."""

    scope: str
    store: MemoryStore


@dataclass(frozen=True)
class SearchHit:
    memory: MemoryFile
    scope: str
    score: float
    snippet: str  # the body's line holding most of the query's terms, one line, bounded


def search_memories(
    folders: Sequence[MemoryFolder], query: str, limit: int = DEFAULT_LIMIT, now: float | None = None
) -> list[SearchHit]:
    """Up to `limit` memories sharing a search term with `query`, best first (a tie keeps the
    folders' order, the narrower scope first)."""
    found = [
        (score, order, folder, memory)
        for order, folder in enumerate(folders)
        for memory, score in ranking_for(folder.store).search(query, limit, now)
    ]
    found.sort(key=lambda hit: (-hit[0], hit[1]))
    wanted = set(terms(query))
    return [
        SearchHit(memory, folder.scope, score, _snippet(folder.store, memory, wanted))
        for score, _, folder, memory in found[:limit]
    ]


def hit_lines(hit: SearchHit) -> list[str]:
    """`1.93  project  [feedback] name — description  (file name)`, then the snippet indented;
    every part one visible line whatever the file holds."""
    memory = hit.memory
    description = clean_inline(memory.description, DESCRIPTION_MAX_CHARS)
    first = (
        f"{hit.score:5.2f}  {hit.scope}  [{clean_inline(memory.type, NAME_MAX_CHARS)}] "
        f"{clean_inline(memory.name, NAME_MAX_CHARS)} — {description}  ({visible_path(memory.file_name)})"
    )
    return [first, f"       {hit.snippet}"] if hit.snippet else [first]


def hit_json(hit: SearchHit) -> dict[str, object]:
    memory = hit.memory
    return {
        "file": memory.file_name,
        "name": memory.name,
        "scope": hit.scope,
        "score": round(hit.score, 4),
        "type": memory.type,
        "description": memory.description,
        "snippet": hit.snippet,
        "path": str(memory.path),
    }


def _snippet(store: MemoryStore, memory: MemoryFile, wanted: set[str]) -> str:
    """The body's line with the most of `wanted` (the first of equals; the first line when none
    holds any), cut to SNIPPET_MAX_CHARS around its first such term; "" when unreadable."""
    try:
        text = store.read_text(memory, SNIPPET_READ_BYTES).text
    except OSError:
        return ""
    lines = [line for line in frontmatter.parse(text).body.splitlines() if line.strip()]
    if not lines:
        return ""
    best = max(lines, key=lambda line: len(wanted.intersection(terms(line))))
    line = clean_inline(best, len(best) + 1)
    start = _first_match(line, wanted)
    if len(line) > SNIPPET_MAX_CHARS and start > SNIPPET_MAX_CHARS // 3:
        line = "…" + line[start - SNIPPET_MAX_CHARS // 4 :]
    return clean_inline(line, SNIPPET_MAX_CHARS)


def _first_match(line: str, wanted: set[str]) -> int:
    """Where the first word of `line` that is one of `wanted` starts (0 when none is)."""
    folded = line.casefold()
    positions = [folded.find(word) for word in wanted]
    return min((p for p in positions if p >= 0), default=0)
