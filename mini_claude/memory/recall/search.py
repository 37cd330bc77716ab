"""`memory search`: the memories of every scope that match some words, best first, ranked as recall
ranks them (ranking.py), each with its scope and the line of its text that matches best.

Each scope's folder is searched through its own index and the results merged by score; a scope's
scores are scaled to its own best match, so two scopes' best memories stand side by side. As in
recall, a memory hidden by a narrower scope's of its name, or expired, is not found.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import marked_text
from mini_claude.memory.listing import LIST_DESCRIPTION_MAX_CHARS, NAME_MAX_CHARS, one_line
from mini_claude.memory.recall.ranking import ranking_for
from mini_claude.memory.recall.terms import terms
from mini_claude.memory.scopes import MemoryScopes
from mini_claude.memory.staleness import expired
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore

DEFAULT_LIMIT = 10
SNIPPET_MAX_CHARS = 120
SNIPPET_READ_BYTES = 8192  # of each memory found (a memory is a note; recall reads 4 KB of it)


@dataclass(frozen=True)
class SearchHit:
    memory: MemoryFile  # its scope is `memory.scope`
    score: float
    snippet: str  # the body's line holding most of the query's terms, one line, bounded


def search_memories(
    memories: MemoryScopes | MemoryStore, query: str, limit: int = DEFAULT_LIMIT, now: float | None = None
) -> list[SearchHit]:
    """Up to `limit` memories of the scopes in use sharing a search term with `query`, best first
    (a tie: the narrower scope's first)."""
    scopes = MemoryScopes.of(memories)
    now = time.time() if now is None else now
    stores = scopes.stores()
    left_out = _not_recalled(scopes, stores, now)
    found = [
        (score, order, store, memory)
        for order, store in enumerate(stores)
        for memory, score in ranking_for(store).search(query, limit, now, left_out[store.scope])
    ]
    found.sort(key=lambda hit: (-hit[0], hit[1]))
    wanted = set(terms(query))
    return [
        SearchHit(memory, score, _snippet(store, memory, wanted)) for score, _, store, memory in found[:limit]
    ]


def _not_recalled(scopes: MemoryScopes, stores: list[MemoryStore], now: float) -> dict[str, set[str]]:
    """Each scope's file names recall never offers: hidden by a narrower scope's memory of the
    same name, or expired (memory_recall.py leaves out the same)."""
    every = [memory for store in stores for memory in store.scan()]
    hidden = scopes.shadowed(every)
    left_out: dict[str, set[str]] = {store.scope: set() for store in stores}
    for memory in every:
        if memory.key in hidden or expired(memory, now):
            left_out[memory.scope].add(memory.file_name)
    return left_out


def hit_lines(hit: SearchHit) -> list[str]:
    """`1.93  project  [feedback] name — description  (file name, or `user/…`, `team/…`)`, then
    the snippet indented; every part one line whatever the file holds, what it cannot show (escape
    codes, characters drawn as nothing) written out, as `/memory` lists them."""
    memory = hit.memory
    description = one_line(memory.description, LIST_DESCRIPTION_MAX_CHARS)
    first = (
        f"{hit.score:5.2f}  {memory.scope}  [{one_line(memory.type, NAME_MAX_CHARS)}] "
        f"{one_line(memory.name, NAME_MAX_CHARS)} — {description}  ({visible_path(memory.key)})"
    )
    return [first, f"       {marked_text(hit.snippet)}"] if hit.snippet else [first]


def hit_json(hit: SearchHit) -> dict[str, object]:
    memory = hit.memory
    return {
        "file": memory.file_name,
        "name": memory.name,
        "scope": memory.scope,
        "score": round(hit.score, 4),
        "type": memory.type,
        "description": memory.description,
        "snippet": hit.snippet,
        "path": str(memory.path),
    }


def _snippet(store: MemoryStore, memory: MemoryFile, wanted: set[str]) -> str:
    """The body's line with the most of `wanted` (the first of equals; the first line when none
    holds any), its spaces folded, cut to SNIPPET_MAX_CHARS around its first such term; "" when
    unreadable. As written (hit_lines makes it visible, the JSON escapes it)."""
    try:
        text = store.read_text(memory, SNIPPET_READ_BYTES).text
    except OSError:
        return ""
    lines = [line for line in frontmatter.parse(text).body.splitlines() if line.strip()]
    if not lines:
        return ""
    best = max(lines, key=lambda line: len(wanted.intersection(terms(line))))
    line = " ".join(best.split())
    start = _first_match(line, wanted)
    if len(line) > SNIPPET_MAX_CHARS and start > SNIPPET_MAX_CHARS // 3:
        line = "…" + line[start - SNIPPET_MAX_CHARS // 4 :]
    return line if len(line) <= SNIPPET_MAX_CHARS else line[: SNIPPET_MAX_CHARS - 1].rstrip() + "…"


def _first_match(line: str, wanted: set[str]) -> int:
    """Where the first word of `line` that is one of `wanted` starts (0 when none is)."""
    folded = line.casefold()
    positions = [folded.find(word) for word in wanted]
    return min((p for p in positions if p >= 0), default=0)
