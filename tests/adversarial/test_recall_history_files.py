"""The recall history (`.recall-history.json`) and the tidy hint's state (`tidy-hint.json`) are
files anyone may have replaced: a symlink, a FIFO, a huge or hostile file is reported and
rebuilt, never read through, written through or trusted; two sessions counting at once lose
no count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from mini_claude.memory.listing import list_lines
from mini_claude.memory.recall.history import HISTORY_FILE, HISTORY_MAX_BYTES, RecallHistory
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.tidy.hint import HINT_STATE_FILE, last_noted, note_tidied
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.kit import memory_text, must_finish_within, seed_memories

RECORDS_PER_PROCESS = 150


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    folder = project_memory_dir(str(project_dir))
    seed_memories(
        folder,
        {"project_a.md": memory_text("a", "first fact"), "project_b.md": memory_text("b", "second fact")},
    )
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    history = {"format": 1, "since": 0, "memories": {"project_a.md": {"count": 999, "last": time.time()}}}
    (folder / "planted.json").write_text(json.dumps(history))
    return folder


def plant(kind: str, path: Path, outside: Path) -> None:
    if kind == "symlink out":
        path.symlink_to(outside / "planted.json")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        with open(path, "wb") as file:
            file.truncate(HISTORY_MAX_BYTES + 1)
    elif kind == "not json":
        path.write_text("{ this is not json")
    elif kind == "deep nesting":
        path.write_text("[" * 200_000 + "]" * 200_000)


@case("memory", "a recall history that is a symlink, FIFO, huge or garbage: reported, not read, rebuilt")
@pytest.mark.parametrize("kind", ["symlink out", "fifo", "huge", "not json", "deep nesting"])
def test_an_unusable_history_file_is_reported_and_rebuilt(memory_dir: Path, outside: Path, kind: str) -> None:
    path = memory_dir / HISTORY_FILE
    plant(kind, path, outside)
    outside_before = snapshot(outside)
    with must_finish_within(10):
        loaded = RecallHistory(memory_dir).load()
        assert loaded.entries == {} and loaded.problem
        assert any(line.startswith("(recall history: ") for line in list_lines(MemoryStore(memory_dir)))
        RecallHistory(memory_dir).record(["project_a.md"])
    assert path.is_file() and not path.is_symlink()
    assert RecallHistory(memory_dir).load().entries["project_a.md"].count == 1  # rebuilt: 999 never trusted
    assert snapshot(outside) == outside_before


@case("memory", "hostile entries (negative, boolean, huge counts, future times, paths) are dropped")
def test_hostile_entries_are_dropped_and_the_good_ones_kept(memory_dir: Path) -> None:
    now = time.time()
    entries = {
        "project_a.md": {"count": 2, "last": now - 100},
        "project_b.md": {"count": -5, "last": now},
        "../../etc/passwd.md": {"count": 1, "last": now},
        "MEMORY.md": {"count": 1, "last": now},
        ".lock": {"count": 1, "last": now},
        "user_x.md": {"count": True, "last": now},
        "user_y.md": {"count": 10**12, "last": now},
        "user_z.md": {"count": 1, "last": now + 10 * 365 * 86_400},
        "user_w.md": {"count": 1, "last": "TOO_BIG"},  # written as 1e999: a float that overflows
        "user_v.md": [1, 2],
    }
    (memory_dir / HISTORY_FILE).write_text(
        json.dumps({"format": 1, "since": now - 1000, "memories": entries}).replace('"TOO_BIG"', "1e999")
    )
    loaded = RecallHistory(memory_dir).load()
    assert set(loaded.entries) == {"project_a.md"} and loaded.entries["project_a.md"].count == 2
    assert loaded.problem == f"{HISTORY_FILE}: 9 entries were not valid and are dropped"
    RecallHistory(memory_dir).record(["project_b.md"])
    saved = json.loads((memory_dir / HISTORY_FILE).read_text())["memories"]
    assert set(saved) == {"project_a.md", "project_b.md"} and saved["project_b.md"]["count"] == 1


@case("crashes", "two processes counting recalls of one memory at once lose no count")
def test_two_processes_counting_at_once_lose_none(memory_dir: Path) -> None:
    command = [sys.executable, "-m", "tests.adversarial.recall_recorder", str(memory_dir), "project_a.md"]
    processes = [
        subprocess.Popen([*command, str(RECORDS_PER_PROCESS)], cwd=Path(__file__).parents[2])
        for _ in range(2)
    ]
    (memory_dir / "go").touch()
    for process in processes:
        assert process.wait(timeout=120) == 0
    entries = RecallHistory(memory_dir).load().entries
    assert entries["project_a.md"].count == 2 * RECORDS_PER_PROCESS


@case("paths", "the hint's state file as a symlink: not read through, replaced rather than written through")
def test_the_hint_state_is_never_followed(memory_dir: Path, outside: Path) -> None:
    state = memory_dir.parent / HINT_STATE_FILE
    (outside / "planted.json").write_text(json.dumps({"noted": time.time()}))
    state.symlink_to(outside / "planted.json")
    outside_before = snapshot(outside)
    assert last_noted(memory_dir, time.time()) is None  # a symlink is not our state: the hint may show
    note_tidied(memory_dir, time.time())
    assert state.is_file() and not state.is_symlink()
    assert snapshot(outside) == outside_before
