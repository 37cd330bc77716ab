"""Recall ranking: whether the memory a message needs is among those offered to the side model
(5,000 memories, the relevant ones of every age), and what choosing them costs a fresh process."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.recall.ranking import RecallRanking
from mini_claude.memory.recall.ranking_index import INDEX_FILE
from mini_claude.memory.recall.selection import MANIFEST_MAX_MEMORIES
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import memory_file_name
from tests.bench import relevance_data as data
from tests.bench.stats import Row, Samples, ratio_at_most, share_at_least

FOR_COVERAGE = 5_000
SEED = 20261201
DAY = 86_400
MAX_AGE_DAYS = 400
CJK_SHARE = 0.15  # of the distractors
QUERY = "how do we run the database migration tests before a release?"
PROBE_TIMEOUT = 120.0


def _distractor(rng: random.Random) -> tuple[str, str, str, str]:
    """(type, name, description, body) of a memory that is about something else."""
    pick = rng.choice
    if rng.random() < CJK_SHARE:
        words = pick(data.DISTRACTOR_CJK)
        glue = " " if words[0] == "배포" else ""  # Korean spaces its words; Chinese and Japanese do not
        name = glue.join(rng.sample(words, 2))
        description = glue.join(rng.sample(words, rng.randint(4, 6)))
        body = "。".join(glue.join(rng.sample(words, 5)) for _ in range(rng.randint(2, 4)))
        return pick(("project", "reference", "feedback")), name, description, body
    component, topic, tool = (
        pick(data.DISTRACTOR_COMPONENTS),
        pick(data.DISTRACTOR_TOPICS),
        pick(data.DISTRACTOR_TOOLS),
    )
    verb, when, style = pick(data.DISTRACTOR_VERBS), pick(data.DISTRACTOR_WHEN), pick(data.DISTRACTOR_STYLES)
    other = pick(data.DISTRACTOR_TOPICS)
    body = (
        f"The {component} {topic} is tracked in {tool}. {verb.capitalize()} it {when}.\n"
        f"Ask in Slack if the {other} looks off; the {component} owners know the history.\n"
    )
    kind = rng.randrange(4)
    if kind == 0:
        return "project", f"{component} {topic}", f"{verb} the {component} {topic} {when}", body
    if kind == 1:
        return (
            "feedback",
            f"{style} for {component}",
            f"user wants {style} when we work on {component} {topic}",
            body,
        )
    if kind == 2:
        return "reference", f"{component} {topic} in {tool}", f"the {component} {topic} live in {tool}", body
    return (
        "user",
        f"user works on the {component}",
        f"user knows the {component} well, is new to {topic}",
        body,
    )


def write_labelled_dir(root: Path, count: int = FOR_COVERAGE) -> list[tuple[str, str]]:
    """`count` memories, the labelled ones among them; returns (message, relevant file name)."""
    rng = random.Random(SEED)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    taken: set[str] = set()
    labelled = []

    def write(memory_type: str, name: str, description: str, body: str) -> str:
        file_name = memory_file_name(memory_type, name, taken)
        taken.add(file_name.casefold())
        fields = {"name": name, "description": description, "type": memory_type}
        (root / file_name).write_text(frontmatter.format(fields, body + "\n"), encoding="utf-8")
        return file_name

    for memory_type, name, description, body, messages in data.TARGETS:
        file_name = write(memory_type, name, description, body)
        labelled += [(message, file_name) for message in messages]
    for _ in range(count - len(data.TARGETS)):
        write(*_distractor(rng))
    return labelled


def pasted_messages(labelled: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each memory's first message again, after a log or code pasted before it (the question last,
    as people ask about what they paste)."""
    firsts: dict[str, str] = {}
    for message, file_name in labelled:
        firsts.setdefault(file_name, message)
    return [
        (f"{data.PASTES[number % len(data.PASTES)]}\n{message}", file_name)
        for number, (file_name, message) in enumerate(firsts.items())
    ]


def restamp(root: Path, seed: int) -> None:
    """Every memory a new age, spread over MAX_AGE_DAYS: each run sees the labelled ones elsewhere."""
    rng = random.Random(seed)
    now = time.time()
    for path in sorted(root.glob("*.md")):
        stamp = now - rng.uniform(0, MAX_AGE_DAYS * DAY)
        os.utime(path, (stamp, stamp))


def coverage_row(root: Path, runs: int) -> Row:
    """Share of messages (short ones, and with a paste before them) whose relevant memory is
    offered, against the newest the manifest holds."""
    written = write_labelled_dir(root)
    labelled = written + pasted_messages(written)
    measured, baseline = Samples(unit="share"), Samples(unit="share")
    for run in range(runs):
        restamp(root, SEED + run)
        store = MemoryStore(root)
        ranking = RecallRanking(store)
        newest = {m.file_name for m in store.scan(limit=MANIFEST_MAX_MEMORIES) if m.problem is None}
        found = sum(
            file_name in {m.file_name for m in ranking.candidates(message, MANIFEST_MAX_MEMORIES)}
            for message, file_name in labelled
        )
        measured.add(found / len(labelled))
        baseline.add(sum(file_name in newest for _, file_name in labelled) / len(labelled))
    return Row("relevant memory in the manifest", measured, baseline, *share_at_least(0.95))


def probe(mode: str, root: Path) -> float:
    """Seconds one fresh process takes to choose (`ranking`) or scan (`scan`, `newest`)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.ranking_probe", mode, str(root), QUERY],
        capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=True,
    )  # fmt: skip
    return float(done.stdout)


def candidates_row(root: Path, runs: int) -> tuple[Row, float, int, Samples]:
    """Choosing candidates in a fresh process with the index on disk (a second session), against
    reading every header (what choosing by relevance costs without an index). Also returns the
    index's cold build time, its size, and a scan of the newest (for the info lines)."""
    index = root / INDEX_FILE
    index.unlink(missing_ok=True)
    cold = probe("ranking", root)
    size = index.stat().st_size
    measured, baseline, newest = Samples(), Samples(), Samples()
    for _ in range(runs):
        measured.add(probe("ranking", root))
        baseline.add(probe("scan", root))
        newest.add(probe("newest", root))
    return Row("choosing candidates at scale", measured, baseline, *ratio_at_most(0.5)), cold, size, newest
