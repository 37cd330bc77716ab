"""Which memories look alike from their headers alone (the words of name and description, any
script): what the start-up hint counts as likely duplicates and what tidy lists next to each other.

Bounded work: memories meet only through words they share, a word shared by very many memories
(it says little) pairs nobody, and the comparisons stop at MAX_PAIR_CHECKS.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from mini_claude.memory.recall.terms import terms
from mini_claude.memory.store.memory_file import MemoryFile

SIMILAR_SHARE = 0.6  # of the two memories' words in common (Jaccard): "likely the same subject"
MIN_SHARED_WORDS = 2  # one shared word is a topic, not a duplicate
COMMON_WORD_MEMORIES = 50  # a word in more memories than this pairs nobody (it is a topic, not a match)
MAX_PAIR_CHECKS = 200_000  # ~0.2 s at worst, whatever the folder holds
_NUMBER = re.compile(r"\d+")


def header_words(memory: MemoryFile) -> frozenset[str]:
    text = f"{memory.name} {memory.description}"
    # Numbers too, even one digit long (which `terms` drops): "fact 1" and "fact 2" are two facts.
    return frozenset([*terms(text), *_NUMBER.findall(text)])


def similar_pairs(memories: Sequence[MemoryFile]) -> list[tuple[int, int]]:
    """Index pairs (i < j) of memories whose headers share most of their words."""
    words = [header_words(memory) for memory in memories]
    holders: dict[str, list[int]] = defaultdict(list)
    for index, found in enumerate(words):
        for word in found:
            holders[word].append(index)
    shared: dict[tuple[int, int], int] = defaultdict(int)
    checks = 0
    for indexes in holders.values():
        if len(indexes) < 2 or len(indexes) > COMMON_WORD_MEMORIES:
            continue
        for position, first in enumerate(indexes):
            for second in indexes[position + 1 :]:
                shared[(first, second)] += 1
                checks += 1
            if checks >= MAX_PAIR_CHECKS:
                break
        if checks >= MAX_PAIR_CHECKS:
            break
    pairs = []
    for (first, second), count in shared.items():
        union = len(words[first] | words[second])
        if count >= MIN_SHARED_WORDS and union and count / union >= SIMILAR_SHARE:
            pairs.append((first, second))
    return sorted(pairs)


def groups_of_alike(memories: Sequence[MemoryFile]) -> list[list[int]]:
    """Every memory's index once, those that look alike next to each other (connected through
    `similar_pairs`), each group in the order the memories came."""
    parent = list(range(len(memories)))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    for first, second in similar_pairs(memories):
        parent[root(second)] = root(first)
    groups: dict[int, list[int]] = {}
    for index in range(len(memories)):
        groups.setdefault(root(index), []).append(index)
    return list(groups.values())
