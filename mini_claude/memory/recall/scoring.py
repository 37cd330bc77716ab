"""How recall ranks the memories a message matches: BM25 over each memory's name, description, type
and body start, fused with two kinds of context, both read off the files' times:

- its day: the relevance of all the memories saved that same calendar day taken together. Memories
  saved on one day tend to be about one piece of work, so a memory whose own words say little ("it
  felt crazy, all that training paid off") is still found when its day is the one meant;
- its moment: the memories saved within NEIGHBOUR_SECONDS before or after it. A note saved right
  after another is usually its follow-up ("how did they take it?" / "they were scared, but…"): the
  memory is lifted by its neighbours' relevance, and by that of the window of them all together
  (their words meet there: the question in one, the answer in the next). A neighbour of a strong
  match is ranked even when it shares no word with the message; a day never brings one in.

The score is then weighed by how specific the memory's own words are (the mean idf of its terms):
of memories matching alike, one made of the words every memory holds says least.

Measured on LoCoMo (tests/bench/locomo_rows.py, each dialog turn a memory written in dialog order):
the day lifts Recall@50 from ~78% to ~87%; the moment, with Lucene's idf and k1 0.9, Recall@5/10
from 63.6/72.7% to 71.0/79.6%; specificity to 73.2/81.0%. The constants were chosen on five of its
seven conversations and checked on the other two.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import NamedTuple

# BM25 weight of a term found in the name, description, type, body.
COLUMN_WEIGHTS = (3.0, 2.0, 0.5, 1.0)
# BM25's term-frequency saturation and length normalisation for a memory (and its moment); a
# day is a long text, weighed as BM25 usually is.
K1, B = 0.9, 0.75
DAY_K1, DAY_B = 1.2, 0.75
# Beside the memory's own relevance (each signal scaled to 0-1 per query): its day's, its moment's
# (the window's), and the sum of its neighbours' own. Above 0.75 a day of memories about something
# else starts to crowd a relevant memory out of the manifest on our own bench. A day's relevance is
# its text's BM25 blended with its best memory's (DAY_BEST_MEMORY_SHARE of it): a day holding one
# memory right on the point outranks a day that mentions the words in passing.
DAY_WEIGHT = 0.75
DAY_BEST_MEMORY_SHARE = 1 / 3
WINDOW_WEIGHT = 1.0
NEIGHBOUR_WEIGHT = 0.25
NEIGHBOUR_SECONDS = 120
# Memories saved together in a burst (a copy, a checkout, an import: dozens in the same seconds)
# are no conversation: one with more neighbours than this has none.
MAX_NEIGHBOURS = 8
# A memory's score is multiplied by its specificity (the mean idf of its distinct terms, relative to
# the most specific match's) to this power: of two memories matching alike, the one made of rarer
# words says more (a chat's "wow, so cool!" beside the turn telling what happened; a note in the
# words every note holds beside the one naming its subject). Weighed for the best SPECIFIC_RERANKED
# (the manifest's 100 and some): the rest keep their order below them.
SPECIFIC_POWER = 0.5
SPECIFIC_RERANKED = 300
# The newest memory's score counts up to this much more; the boost halves at HALF_DAYS old.
RECENCY_BOOST = 0.15
RECENCY_HALF_DAYS = 30.0
_NS_PER_DAY = 86_400 * 10**9

Postings = dict[str, dict[int, tuple[float, int]]]  # term -> memory row -> (weighted count, count)
Specificity = Callable[[list[int]], dict[int, float]]  # memory rows -> row -> the mean idf of its terms


class Indexed(NamedTuple):
    """A usable memory as BM25 sees it: its row, file time, calendar day and length in terms."""

    row: int
    mtime_ns: int
    day: int
    length: int


class Corpus:
    """The statistics of all usable memories: lengths, days, and who is whose neighbour."""

    def __init__(self, memories: list[Indexed]) -> None:
        self.memories = {m.row: m for m in memories}
        self.count = len(memories)
        self.average = sum(m.length for m in memories) / max(1, self.count)
        self.day_length: dict[int, int] = defaultdict(int)
        for memory in memories:
            self.day_length[memory.day] += memory.length
        self.day_average = sum(self.day_length.values()) / max(1, len(self.day_length))
        self.neighbours = _neighbours(memories)
        self.window_length = {
            m.row: m.length + sum(self.memories[n].length for n in self.neighbours.get(m.row, ()))
            for m in memories
        }
        self.window_average = sum(self.window_length.values()) / max(1, self.count)


def scores(postings: Postings, corpus: Corpus, now_ns: int) -> dict[int, float]:
    """Each ranked memory's score (higher is better): those holding a term, and their neighbours."""
    own = _own(postings, corpus)
    if not own:
        return {}
    top = max(own.values())
    share = {row: value / top for row, value in own.items()} if top > 0 else dict.fromkeys(own, 0.0)
    day = _days(postings, corpus, share)
    window = _scaled(_windows(postings, corpus))
    result = {}
    for row, in_window in window.items():
        memory = corpus.memories[row]
        nearby = sum(share.get(n, 0.0) for n in corpus.neighbours.get(row, ()))
        score = share.get(row, 0.0) + DAY_WEIGHT * day.get(memory.day, 0.0)
        score += WINDOW_WEIGHT * in_window + NEIGHBOUR_WEIGHT * nearby
        age_days = max(0.0, (now_ns - memory.mtime_ns) / _NS_PER_DAY)
        result[row] = score * (1.0 + RECENCY_BOOST * RECENCY_HALF_DAYS / (RECENCY_HALF_DAYS + age_days))
    return result


def specific(found: dict[int, float], specificity: Specificity) -> dict[int, float]:
    """`found`'s scores weighed by the memories' specificity (`specificity(rows)`: row -> mean idf),
    relative to the most specific match, so that no score grows (idf grows with a folder's size:
    the scores of a big scope and a small one stay comparable); beyond the best SPECIFIC_RERANKED,
    and for a memory without terms, by the least of these weights, so that they stay below."""
    best = heapq.nlargest(SPECIFIC_RERANKED, found, key=found.__getitem__)
    held = specificity(best)
    most = max(held.values(), default=0.0)
    if most <= 0:
        return found
    weight = {row: (value / most) ** SPECIFIC_POWER for row, value in held.items()}
    least = min(weight.values())
    return {row: score * weight.get(row, least) for row, score in found.items()}


def _own(postings: Postings, corpus: Corpus) -> dict[int, float]:
    found: dict[int, float] = defaultdict(float)
    for counts in postings.values():
        weight = idf(corpus.count, len(counts))
        for row, (weighted, _) in counts.items():
            length = corpus.memories[row].length
            found[row] += weight * _saturated(weighted, length / max(corpus.average, 1e-9), K1, B)
    return found


def _days(postings: Postings, corpus: Corpus, share: dict[int, float]) -> dict[int, float]:
    """Each day's relevance (0-1): its text's BM25 blended with its best memory's."""
    text: dict[int, float] = defaultdict(float)
    for counts in postings.values():
        per_day: dict[int, int] = defaultdict(int)
        for row, (_, count) in counts.items():
            per_day[corpus.memories[row].day] += count
        weight = idf(len(corpus.day_length), len(per_day))
        for day, count in per_day.items():
            relative = corpus.day_length[day] / max(corpus.day_average, 1e-9)
            text[day] += weight * _saturated(count, relative, DAY_K1, DAY_B)
    best: dict[int, float] = defaultdict(float)
    for row, value in share.items():
        day = corpus.memories[row].day
        best[day] = max(best[day], value)
    text = _scaled(text)
    return {
        day: (1 - DAY_BEST_MEMORY_SHARE) * text.get(day, 0.0) + DAY_BEST_MEMORY_SHARE * best[day]
        for day in text.keys() | best.keys()
    }


def _windows(postings: Postings, corpus: Corpus) -> dict[int, float]:
    """Each memory's moment (itself and its neighbours, as one text): its BM25."""
    found: dict[int, float] = defaultdict(float)
    for counts in postings.values():
        in_window: dict[int, int] = defaultdict(int)
        for row, (_, count) in counts.items():
            in_window[row] += count
            for neighbour in corpus.neighbours.get(row, ()):
                in_window[neighbour] += count
        weight = idf(corpus.count, len(in_window))
        for row, count in in_window.items():
            relative = corpus.window_length[row] / max(corpus.window_average, 1e-9)
            found[row] += weight * _saturated(count, relative, K1, B)
    return found


def idf(count: int, holders: int) -> float:
    """BM25's inverse document frequency, kept positive (Lucene's): a word more than half the
    memories hold still says a little (a name, in a folder mostly about that person)."""
    return math.log(1.0 + (count - holders + 0.5) / (holders + 0.5))


def _saturated(count: float, relative_length: float, k1: float, b: float) -> float:
    return count * (k1 + 1) / (count + k1 * (1 - b + b * relative_length))


def _scaled(values: dict[int, float]) -> dict[int, float]:
    top = max(values.values(), default=0.0)
    return {key: value / top for key, value in values.items()} if top > 0 else dict.fromkeys(values, 0.0)


def _neighbours(memories: Iterable[Indexed]) -> dict[int, tuple[int, ...]]:
    """Each memory's neighbours: the others saved within NEIGHBOUR_SECONDS of it (none for a
    memory of a burst, and a burst's memory is nobody's neighbour)."""
    by_time = sorted((m.mtime_ns, m.row) for m in memories)
    times = [mtime for mtime, _ in by_time]
    reach = NEIGHBOUR_SECONDS * 10**9
    around: dict[int, tuple[int, ...]] = {}
    for index, (mtime, row) in enumerate(by_time):
        start = bisect.bisect_left(times, mtime - reach, hi=index)
        end = bisect.bisect_right(times, mtime + reach, lo=index)
        if 1 < end - start <= MAX_NEIGHBOURS + 1:
            around[row] = tuple(by_time[i][1] for i in range(start, end) if i != index)
    return {row: kept for row, near in around.items() if (kept := tuple(n for n in near if n in around))}
