"""How a tidy shows many memories to the model: every header first, in as few calls as fit, so
that duplicates worded differently ("deploy schedule", "release train timing") still meet; the
model answers with the groups worth reading whole, and each group is then read and reviewed in a
call of its own (review.py). Alike memories are listed next to each other, which helps it see them.
"""

from __future__ import annotations

from collections.abc import Sequence

from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.naming import name_key
from mini_claude.memory.tidy.likeness import groups_of_alike

# Bytes of header lines in one call (~25,000 tokens; a line is at most ~450 bytes): about 500
# memories, so up to the 2,000 a tidy reviews take at most a handful of calls.
OVERVIEW_MAX_BYTES = 100_000
OVERVIEW_MAX_GROUPS = 20  # groups asked for in one call; each is one more call to read and review


def alike_order(memories: Sequence[MemoryFile]) -> list[MemoryFile]:
    """`memories` by type and name, those that look alike (likeness.py) next to each other."""
    ordered = sorted(memories, key=lambda m: (m.type, name_key(m.name), m.file_name))
    return [ordered[index] for group in groups_of_alike(ordered) for index in group]


def overview_parts(lines: Sequence[str]) -> list[range]:
    """`lines` (one header each, in order) cut into as few runs as fit OVERVIEW_MAX_BYTES each,
    as even as can be, so that no call gets only a few stragglers."""
    total = sum(len(line.encode("utf-8", "surrogateescape")) + 1 for line in lines)
    if not lines:
        return []
    calls = -(-total // OVERVIEW_MAX_BYTES)
    share = -(-total // calls)  # aim at even calls; never over the limit
    parts: list[range] = []
    start, size = 0, 0
    for index, line in enumerate(lines):
        length = len(line.encode("utf-8", "surrogateescape")) + 1
        if index > start and (size + length > OVERVIEW_MAX_BYTES or size >= share):
            parts.append(range(start, index))
            start, size = index, 0
        size += length
    parts.append(range(start, len(lines)))
    return parts
