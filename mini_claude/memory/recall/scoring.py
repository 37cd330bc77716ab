"""How recall ranks the memories a message matches: each memory's own relevance (BM25 over its name,
description, type and body start) fused with its day's, the relevance of all the memories saved
that same calendar day taken together.

Memories saved on one day tend to be about one piece of work, so a memory whose own words say
little ("it felt crazy, all that training paid off") is still found when its day is the one the
message is about. Measured on LoCoMo (tests/bench/locomo_rows.py), where each dialog turn is a
memory: the day's part lifts Recall@50 from ~78% to ~87%. Only memories that share a search term
with the message are ranked at all: a day never brings in a memory that matches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

# The day's relevance counts this much beside the memory's own (both scaled to 0-1 per query). On
# LoCoMo anything from 0.75 to 1.5 does as well; above 0.75 a day of memories about something else
# starts to crowd a relevant memory out of the manifest on our own bench (the "relevant memory in
# the manifest" row). A day's relevance is its text's BM25 blended with its best memory's
# (DAY_BEST_MEMORY_SHARE of it): a day holding one memory right on the point outranks a day that
# mentions the words in passing.
DAY_WEIGHT = 0.75
DAY_BEST_MEMORY_SHARE = 1 / 3
# The newest memory's score counts up to this much more; the boost halves at HALF_DAYS old.
RECENCY_BOOST = 0.15
RECENCY_HALF_DAYS = 30.0


@dataclass(frozen=True)
class Match:
    """One memory the query matched: its own BM25 relevance (higher is better), its day, its age."""

    key: int
    relevance: float
    day: int
    age_days: float


def fused_scores(matches: list[Match], day_relevance: dict[int, float]) -> dict[int, float]:
    """Each matched memory's score (about 0-3, higher is better); `day_relevance` is the BM25
    relevance of each day's text, for the days the query matched."""
    if not matches:
        return {}
    top = max(m.relevance for m in matches)
    best_of_day: dict[int, float] = {}
    for match in matches:
        best_of_day[match.day] = max(best_of_day.get(match.day, 0.0), match.relevance)
    top_day = max(day_relevance.values(), default=0.0)
    scores = {}
    for match in matches:
        own = _share(match.relevance, top)
        day = (1 - DAY_BEST_MEMORY_SHARE) * _share(day_relevance.get(match.day, 0.0), top_day)
        day += DAY_BEST_MEMORY_SHARE * _share(best_of_day[match.day], top)
        recency = 1.0 + RECENCY_BOOST * RECENCY_HALF_DAYS / (RECENCY_HALF_DAYS + max(0.0, match.age_days))
        scores[match.key] = (own + DAY_WEIGHT * day) * recency
    return scores


def _share(value: float, top: float) -> float:
    return value / top if top > 0 else 0.0
