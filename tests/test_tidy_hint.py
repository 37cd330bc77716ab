"""The start-up hint: one quiet line when tidying looks worthwhile, at most once a week, never in
print mode, never a model call."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from mini_claude.core.events import Notice
from mini_claude.memory.startup import MemoryStartup
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.tidy.hint import HINT_STATE_FILE, weekly_hint
from tests.agent_harness import Harness
from tests.fake_api import FakeAnthropic
from tests.kit import memory_text, seed_memories

DAY = 86_400
TOPICS = (
    "billing retries",
    "oncall rota",
    "staging database",
    "flaky tests",
    "api versioning",
    "log retention",
)
PLAIN = {
    f"project_{n}.md": memory_text(topic, f"what we decided about {topic}") for n, topic in enumerate(TOPICS)
}
DUPLICATES = {
    "reference_dashboards.md": memory_text(
        "grafana dashboards", "where the grafana dashboards live", "reference"
    ),
    "project_dashboards.md": memory_text("grafana dashboards link", "where the grafana dashboards live"),
}


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    return project_memory_dir(str(project_dir))


def started(store: MemoryStore, now: float) -> list[str]:
    """What one start-up (at `now`) hints."""
    hints: list[str] = []
    startup = MemoryStartup(store, warn=lambda text: pytest.fail(text), hint=hints.append, clock=lambda: now)
    startup._run()  # the thread's work, run here: the test decides the clock
    return hints


def test_likely_duplicates_are_hinted_once_a_week(memory_dir: Path) -> None:
    store = seed_memories(memory_dir, {**PLAIN, **DUPLICATES})
    now = time.time()

    [hint] = started(store, now)
    assert hint == (
        "Memory: 2 memories look like duplicates. "
        "/memory tidy reviews them with you (a hint shown at most once a week)."
    )
    assert json.loads((memory_dir.parent / HINT_STATE_FILE).read_text())["noted"] == now
    assert started(store, now + 6 * DAY) == []
    assert len(started(store, now + 8 * DAY)) == 1


def test_dates_gone_by_are_hinted(memory_dir: Path) -> None:
    store = seed_memories(memory_dir, {
        **PLAIN,
        "project_release.md": memory_text("release", "when v2 ships", body="We ship next Friday.\n"),
        "project_freeze.md": memory_text("freeze", "the code freeze", body="Freeze until 2020-01-31.\n"),
        "project_fresh.md": memory_text("fresh", "said today", body="Demo tomorrow.\n"),
    })  # fmt: skip
    month_ago = time.time() - 30 * DAY
    for name in ("project_release.md", "project_freeze.md"):
        os.utime(memory_dir / name, (month_ago, month_ago))
    [hint] = started(store, time.time())
    assert "2 memories mention dates now past" in hint  # "tomorrow" said today is no date gone by


def test_one_dated_memory_is_said_in_the_singular(memory_dir: Path) -> None:
    store = seed_memories(
        memory_dir, {**PLAIN, "project_release.md": memory_text("release", "v2", body="Ship next Friday.\n")}
    )
    month_ago = time.time() - 30 * DAY
    os.utime(memory_dir / "project_release.md", (month_ago, month_ago))
    [hint] = started(store, time.time())
    assert hint.startswith("Memory: 1 memory mentions dates now past.")


def test_a_tidy_folder_needs_no_hint(memory_dir: Path) -> None:
    assert started(seed_memories(memory_dir, PLAIN), time.time()) == []
    assert not (memory_dir.parent / HINT_STATE_FILE).exists()


def test_a_few_memories_need_no_hint(memory_dir: Path) -> None:
    assert started(seed_memories(memory_dir, DUPLICATES), time.time()) == []


def test_a_state_file_from_the_future_does_not_silence_the_hint(memory_dir: Path) -> None:
    store = seed_memories(memory_dir, {**PLAIN, **DUPLICATES})
    now = time.time()
    (memory_dir.parent / HINT_STATE_FILE).write_text(json.dumps({"noted": now + 365 * DAY}))
    assert weekly_hint(store, now) is not None


def test_the_repl_session_hints_as_a_quiet_notice_and_print_mode_does_not(
    api_env: FakeAnthropic, memory_dir: Path
) -> None:
    seed_memories(memory_dir, {**PLAIN, **DUPLICATES})
    printed = Harness().start(interactive=False)
    printed.session.warm_up()
    printed.session.memory_startup.wait()
    interactive = Harness().start()
    interactive.session.warm_up()
    deadline = time.monotonic() + 10
    while not interactive.of_type(Notice) and time.monotonic() < deadline:
        time.sleep(0.02)

    [notice] = interactive.of_type(Notice)
    assert notice.level == "info" and "/memory tidy" in notice.text
    assert printed.of_type(Notice) == []
    assert api_env.requests == []  # no model call for a hint
