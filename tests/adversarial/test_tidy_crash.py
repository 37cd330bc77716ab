"""A crash during a change to the memories (a tidy's apply above all): the change is journaled in
`.trash/<id>.applying/`, and the next session to start finishes it (every file was written) or
reverts it (some were not), saying which in one line; a crash before the first file changed
leaves nothing to say."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from mini_claude.memory.provenance import without_provenance
from mini_claude.memory.store.changes import Change
from mini_claude.memory.store.memory_store import MemoryStore
from tests.adversarial.cases import case
from tests.adversarial.tidy_applier import fact
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import seed_memories

APPLIER = Path(__file__).with_name("tidy_applier.py")
FACTS = 40  # files a tidy rewrites: its writes are a visible part of each round
START_TIMEOUT = 30.0
CATCH_TIMEOUT = 60.0


@pytest.fixture
def memory_folder(project_dir: Path) -> Path:
    return project_memory_dir(str(project_dir.resolve()))


def fact_in(folder: Path, number: int) -> str:
    """A fact's file as written, without the lines saying who wrote it (a tidy stamps its own)."""
    return without_provenance((folder / f"project_fact_{number}.md").read_text())


def versions(folder: Path) -> list[str]:
    """Each fact's version (A or B), in order."""
    found = []
    for number in range(FACTS):
        text = fact_in(folder, number)
        found.append(next(v for v in "AB" if text == fact(number, v)))
    return found


def applying(folder: Path) -> list[Path]:
    trash = folder / ".trash"
    return [p for p in trash.iterdir() if p.name.endswith(".applying")] if trash.is_dir() else []


def kill_half_way(folder: Path, scratch: Path) -> None:
    """Run tidy_applier.py, freeze it (SIGSTOP) moment after moment until it is caught with its
    journal written and some files rewritten but not all, then SIGKILL it there."""
    ready = scratch / "ready"
    process = subprocess.Popen([sys.executable, str(APPLIER), str(folder), str(ready)])
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready.exists():
            assert process.poll() is None, "the applier died on its own"
            assert time.monotonic() < deadline, "the applier never finished its first round"
            time.sleep(0.005)
        deadline = time.monotonic() + CATCH_TIMEOUT
        while time.monotonic() < deadline:
            os.kill(process.pid, signal.SIGSTOP)
            os.waitpid(process.pid, os.WUNTRACED)  # stopped for sure, not merely signalled
            journal = applying(folder)
            if journal and (journal[0] / "changes.json").exists() and len(set(versions(folder))) == 2:
                return
            os.kill(process.pid, signal.SIGCONT)
            time.sleep(0.001)
        raise AssertionError("never caught the applier half-way through a tidy")
    finally:
        process.kill()  # SIGKILL: no handler, no cleanup
        process.wait(5)


def start_a_session(api_env: FakeAnthropic, project_dir: Path) -> str:
    """A new session (print mode, a process of its own) runs one turn; its stderr."""
    api_env.stream_replies.append(text_reply("Hello."))
    result = Cli(project_dir).run("-p", "hello there")
    assert result.returncode == 0, result.stderr
    return result.stderr


@case("crashes", "SIGKILL half-way through a tidy's apply: the next start reverts it, in one line")
def test_a_tidy_killed_half_way_is_reverted_by_the_next_start(
    api_env: FakeAnthropic, project_dir: Path, memory_folder: Path, tmp_path: Path
) -> None:
    seed_memories(memory_folder, {f"project_fact_{n}.md": fact(n, "A") for n in range(FACTS)})
    kill_half_way(memory_folder, tmp_path)
    assert len(set(versions(memory_folder))) == 2  # half-applied: the harm, before the next start

    stderr = start_a_session(api_env, project_dir)

    [line] = [line for line in stderr.splitlines() if "interrupted" in line]
    assert line.startswith("Memory: the tidy (") and line.endswith(
        f"{FACTS} changes) was interrupted part-way, and reverted: every memory file is as before it."
    )
    assert len(set(versions(memory_folder))) == 1  # every fact as it was before that tidy
    assert applying(memory_folder) == []
    index = (memory_folder / "MEMORY.md").read_text()
    assert all(f"(project_fact_{n}.md)" in index for n in range(FACTS))
    assert MemoryStore(memory_folder).startup() == []  # said once, not at every start


@case(
    "crashes", "killed after a tidy's last write, before it was noted: the next start keeps it, in one line"
)
def test_a_tidy_killed_after_its_last_write_stands(
    api_env: FakeAnthropic, project_dir: Path, memory_folder: Path
) -> None:
    seed_memories(memory_folder, {f"project_fact_{n}.md": fact(n, "A") for n in range(3)})
    store = MemoryStore(memory_folder)
    store.apply_changes("the tidy", [_rewrite(n, "B") for n in range(3)])
    # The moment a kill can land between the last write and the rename that notes the set applied.
    [done] = (memory_folder / ".trash").iterdir()
    done.rename(done.with_name(done.name + ".applying"))

    stderr = start_a_session(api_env, project_dir)

    assert "Memory: the tidy (" in stderr
    assert "3 changes) was interrupted after its last change, and stands (/memory undo reverts it)." in stderr
    assert all(fact_in(memory_folder, n) == fact(n, "B") for n in range(3))
    undone = Cli(project_dir).run("memory", "undo")
    assert undone.returncode == 0 and "The tidy was undone" in undone.stdout
    assert all(fact_in(memory_folder, n) == fact(n, "A") for n in range(3))


@case("crashes", "killed before a change's first write (no manifest yet): the next start says nothing")
def test_a_change_killed_before_its_journal_leaves_nothing_to_say(
    api_env: FakeAnthropic, project_dir: Path, memory_folder: Path
) -> None:
    seed_memories(memory_folder, {"project_fact_0.md": fact(0, "A")})
    # What a kill leaves while the old versions are being kept: the folder, a copy, no manifest.
    stopped = memory_folder / ".trash" / "20260101T000000000000Z-abcdef.applying"
    (stopped / "before").mkdir(parents=True)
    (stopped / "before" / "project_fact_0.md").write_text(fact(0, "A")[:20])

    stderr = start_a_session(api_env, project_dir)

    assert "interrupted" not in stderr and "Memory" not in stderr
    assert not stopped.exists() and without_provenance(
        (memory_folder / "project_fact_0.md").read_text()
    ) == fact(0, "A")


@case("crashes", "a journal whose file was edited by hand since the crash: that file is left, and said")
def test_a_file_edited_after_the_crash_is_not_reverted(
    api_env: FakeAnthropic, project_dir: Path, memory_folder: Path
) -> None:
    seed_memories(memory_folder, {f"project_fact_{n}.md": fact(n, "A") for n in range(2)})
    MemoryStore(memory_folder).apply_changes("the tidy", [_rewrite(n, "B") for n in range(2)])
    [done] = (memory_folder / ".trash").iterdir()
    done.rename(done.with_name(done.name + ".applying"))
    (memory_folder / "project_fact_0.md").write_text(fact(0, "A"))  # a crash before this write...
    (memory_folder / "project_fact_1.md").write_text("edited by hand meanwhile\n")  # ...and a hand edit

    stderr = start_a_session(api_env, project_dir)

    [line] = [line for line in stderr.splitlines() if "interrupted" in line]
    assert "was interrupted part-way, and reverted: project_fact_1.md was edited since the tidy" in line
    assert (memory_folder / "project_fact_1.md").read_text() == "edited by hand meanwhile\n"


def _rewrite(number: int, version: str) -> Change:
    return Change(f"project_fact_{number}.md", fact(number, version).encode(), keep_mtime=True)
