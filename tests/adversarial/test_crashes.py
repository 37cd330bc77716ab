"""Crashes and concurrency: a saver killed at any moment leaves the old or the new memory whole,
and the next start leaves no temp files behind; two sessions saving at once lose nothing; an
unusable memory folder is a clear error and the session goes on.

The store-level and print-mode versions of the concurrency case are in tests/test_memory_store.py
and tests/test_memory_e2e.py; here two interactive REPLs in pseudo-terminals race."""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from mini_claude.memory.provenance import without_provenance
from tests.adversarial.cases import case
from tests.adversarial.memory_saver import BIG_FILE, big_memory, small_memory
from tests.adversarial.world import last_tool_result
from tests.agent_harness import Harness, assert_next_turn_works
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, RecordedRequest, Reply, multi_tool_reply, text_reply, tool_reply
from tests.kit import main_calls, memory_text, result_text, system_text
from tests.writers_kit import SAVES_PER_WRITER, assert_every_save_kept

SAVER = Path(__file__).with_name("memory_saver.py")
# A round of the save loop then spends its time in the store (locking, writing, fsyncing, indexing).
BODY_BYTES = 64 * 1024
# A memory whose write is a visible part of each round, so the saver is soon caught mid-write.
LARGE_BODY_BYTES = 256 * 1024
# Hand-written memories that make MEMORY.md ~300 KB: writing the index is a visible part of a round too.
SEEDED_MEMORIES = 2_500
RANDOM_KILLS = 8
SAVER_START_TIMEOUT = 20.0
CATCH_TIMEOUT = 60.0  # to catch the saver mid-write (a round takes 0.1 s to 1 s)
CATCH_POLL_SECONDS = 0.001  # between looks: the saver runs between them
INDEX_ENTRY = re.compile(r"- \*\*\[.*\]\([^()\s<>]+\)\*\* \(project\) — .*")


class Saver:
    """A memory saver process (memory_saver.py) and the means to stop it at a chosen moment."""

    def __init__(self, folder: Path, scratch: Path, body_bytes: int = BODY_BYTES) -> None:
        ready = scratch / f"ready-{time.monotonic_ns()}"
        self.process = subprocess.Popen(
            [sys.executable, str(SAVER), str(folder), str(ready), str(body_bytes)]
        )
        deadline = time.monotonic() + SAVER_START_TIMEOUT
        with self.killed_on_failure():
            while not ready.exists():
                assert self.process.poll() is None, "the saver died on its own"
                assert time.monotonic() < deadline, "the saver never finished its first round"
                time.sleep(0.005)

    @contextlib.contextmanager
    def killed_on_failure(self) -> Iterator[None]:
        """A failed check leaves no saver behind, running or frozen."""
        try:
            yield
        except BaseException:
            self.kill()
            raise

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: no handler, no cleanup
        self.process.wait(5)

    def kill_while(self, folder: Path, temp_prefix: str, check_paused: Callable[[], None]) -> None:
        """Freeze the saver (SIGSTOP) moment after moment until it is caught with a temp file
        `temp_prefix…` in `folder`, check, then SIGKILL it. Looking only while it is frozen: on a
        RAM disk the index's temp file lives for 0.3 ms of a 130 ms round, gone again before a look
        at a running saver could stop it."""
        rng = random.Random(7)
        deadline = time.monotonic() + CATCH_TIMEOUT
        with self.killed_on_failure():
            while time.monotonic() < deadline:
                assert self.process.poll() is None, "the saver died on its own"
                os.kill(self.process.pid, signal.SIGSTOP)
                os.waitpid(self.process.pid, os.WUNTRACED)  # stopped for sure, not merely signalled
                if _temp_files(folder, temp_prefix):  # mid-write: this is the moment we want
                    check_paused()
                    self.kill()
                    return
                os.kill(self.process.pid, signal.SIGCONT)
                # Random pauses, not a fixed beat that could keep falling between two writes.
                time.sleep(rng.uniform(0, 2 * CATCH_POLL_SECONDS))
            raise AssertionError(f"never caught the saver while {temp_prefix}… existed")


def _temp_files(folder: Path, prefix: str) -> list[str]:
    with os.scandir(folder) as entries:
        return [e.name for e in entries if e.name.startswith(prefix) and e.name.endswith(".tmp")]


def assert_every_memory_whole(folder: Path, body_bytes: int = BODY_BYTES) -> None:
    """The big memory is all-A or all-B, every small one is exactly as saved, the index is not torn."""
    big = without_provenance((folder / BIG_FILE).read_text())
    assert big in (big_memory("A", body_bytes), big_memory("B", body_bytes))
    for path in folder.glob("project_fact_*.md"):
        number = int(path.stem.rsplit("_", 1)[1])
        assert without_provenance(path.read_text()) == small_memory(number), path.name
    index = (folder / "MEMORY.md").read_text()
    assert index.startswith("# Memory index\n") and index.endswith("\n")
    assert all(INDEX_ENTRY.fullmatch(line) for line in index.splitlines()[1:])


def assert_next_start_cleans_up(api_env: FakeAnthropic, folder: Path) -> None:
    """A new session starts (re-indexing), leaves no temp files, and indexes exactly the files there."""
    harness = Harness().start()
    api_env.stream_replies.append(text_reply("Hello."))
    assert harness.turn("hello there").reason == "done"
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
    files = sorted(p.name for p in folder.glob("project_*.md"))
    index = (folder / "MEMORY.md").read_text()
    assert sorted(re.findall(r"\]\(([^()]+)\)\*\*", index)) == files
    assert index.splitlines()[1] in system_text(main_calls(api_env)[-1])  # the prompt holds the new index


@pytest.fixture
def memory_folder(project_dir: Path) -> Path:
    return project_memory_dir(str(project_dir.resolve()))


@case(
    "crashes", "SIGKILL while the memory's temp file is written: old content readable meanwhile, whole after"
)
def test_sigkill_while_writing_a_memory(api_env: FakeAnthropic, memory_folder: Path, tmp_path: Path) -> None:
    saver = Saver(memory_folder, tmp_path, LARGE_BODY_BYTES)
    saver.kill_while(
        memory_folder, f".{BIG_FILE}.", lambda: assert_every_memory_whole(memory_folder, LARGE_BODY_BYTES)
    )

    assert_every_memory_whole(memory_folder, LARGE_BODY_BYTES)
    assert _temp_files(memory_folder, f".{BIG_FILE}.")  # the kill did land mid-write
    assert_next_start_cleans_up(api_env, memory_folder)


@case(
    "crashes",
    "SIGKILL while MEMORY.md's temp file is written: memories and index whole, next start re-indexes",
)
def test_sigkill_while_writing_the_index(api_env: FakeAnthropic, memory_folder: Path, tmp_path: Path) -> None:
    memory_folder.mkdir(parents=True)
    for number in range(SEEDED_MEMORIES):
        (memory_folder / f"project_seed_{number}.md").write_text(
            memory_text(f"seed {number}", f"a memory written by hand, number {number} " + "x" * 60)
        )
    saver = Saver(memory_folder, tmp_path)
    saver.kill_while(memory_folder, ".MEMORY.md.", lambda: assert_every_memory_whole(memory_folder))

    assert_every_memory_whole(memory_folder)
    assert_next_start_cleans_up(api_env, memory_folder)


@case(
    "crashes",
    f"SIGKILL at {RANDOM_KILLS} random moments of a save loop: every memory whole each time, then cleaned",
)
def test_sigkill_at_random_moments(api_env: FakeAnthropic, memory_folder: Path, tmp_path: Path) -> None:
    rng = random.Random(5)  # fixed seed: the same moments on every run, spread over the save
    for _ in range(RANDOM_KILLS):
        saver = Saver(memory_folder, tmp_path)
        time.sleep(rng.uniform(0, 0.15))
        saver.kill()
        assert_every_memory_whole(memory_folder)

    assert_next_start_cleans_up(api_env, memory_folder)


# --- two REPLs at once ------------------------------------------------------------------------------


def saving_replies(memory_folder: Path) -> Callable[[RecordedRequest], Reply | None]:
    """Each REPL asks to save batch A or B; both get their parallel write_file calls at one moment."""
    both_asked = threading.Barrier(2, timeout=30)

    def respond(request: RecordedRequest) -> Reply | None:
        if not request.stream:
            return text_reply('{"selected_memories": []}')
        last = request.messages[-1]["content"]
        batch = "A" if "batch A" in str(request.messages[0]["content"]) else "B"
        if any(block.get("type") == "tool_result" for block in last):
            return text_reply(f"saved batch {batch}")
        both_asked.wait()
        return multi_tool_reply(
            [
                (
                    "write_file",
                    {
                        "file_path": f"{memory_folder}/project_{batch}_{n}.md",
                        "content": memory_text(
                            f"fact {batch}{n}", f"fact {n} of batch {batch}", body=f"{batch}{n}\n"
                        ),
                    },
                )
                for n in range(SAVES_PER_WRITER)
            ]
        )

    return respond


@case("crashes", "two REPLs (ptys) saving 100 memories each at once: all 200 files and 200 index lines")
def test_two_repls_saving_100_memories_each(
    api_env: FakeAnthropic, project_dir: Path, memory_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINI_CLAUDE_MAX_TOOL_CALLS", str(SAVES_PER_WRITER))  # all in one reply (default 64)
    api_env.responder = saving_replies(memory_folder)
    cli = Cli(project_dir)
    failures: list[BaseException] = []

    def session(batch: str) -> None:
        try:
            with cli.terminal() as term:
                term.wait_until_ready()
                term.submit(f"save batch {batch}")
                term.expect(f"saved batch {batch}", timeout=60)
                term.expect_prompt()
                term.submit("/exit")
                assert term.wait_exit() == 0
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    threads = [threading.Thread(target=session, args=(batch,)) for batch in "AB"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert not failures, failures

    saved = [f"fact {n} of batch {batch}" for batch in "AB" for n in range(SAVES_PER_WRITER)]
    assert_every_save_kept(memory_folder, saved)


# --- a memory folder that cannot be written ---------------------------------------------------------


def save_attempt(api_env: FakeAnthropic, folder: Path) -> tuple[Harness, str]:
    harness = Harness().start()
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": f"{folder}/project_x.md", "content": memory_text()}),
            text_reply("Ok."),
        ]
    )
    ended = harness.turn("remember this")
    assert ended.reason == "done"
    return harness, result_text(last_tool_result(api_env))


@case(
    "crashes",
    "memory path blocked (a component is a file): clear 'Not a directory' error, the session continues",
)
def test_memory_dir_path_is_a_file(api_env: FakeAnthropic, memory_folder: Path) -> None:
    blocked = memory_folder.parent  # ~/.mini-claude/projects/<hash>: a file where a folder must be
    blocked.parent.mkdir(parents=True)
    blocked.write_text("not a folder\n")

    harness, result = save_attempt(api_env, memory_folder)

    assert result == f"Memory not saved: cannot use the memory directory {memory_folder}: Not a directory"
    assert "No memories saved yet" in system_text(main_calls(api_env)[0])
    assert blocked.read_text() == "not a folder\n"
    assert_next_turn_works(harness, api_env)


@case("crashes", "the memory folder itself is a file: the error says so, the file is left alone")
def test_memory_dir_is_a_file(api_env: FakeAnthropic, memory_folder: Path) -> None:
    memory_folder.parent.mkdir(parents=True)
    memory_folder.write_text("not a folder\n")

    harness, result = save_attempt(api_env, memory_folder)

    assert result == (
        f"Memory not saved: cannot use the memory directory {memory_folder}: it is a file, not a directory"
    )
    assert memory_folder.read_text() == "not a folder\n"
    assert_next_turn_works(harness, api_env)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` refuses new files: by its mode, or, for root (whom modes do not stop), by the
    filesystem's immutable attribute (`chattr +i`, which binds root too)."""
    if os.geteuid() != 0:
        folder.chmod(0o500)
        undo = ["chmod", "700", str(folder)]
    else:
        try:
            done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
        except FileNotFoundError:
            done = None
        if done is None or done.returncode != 0:
            pytest.skip(
                "running as root, whom file modes do not stop, without chattr +i here; "
                "test_memory_dir_path_is_a_file covers the same error path"
            )
        undo = ["chattr", "-i", str(folder)]
    try:
        yield
    finally:
        subprocess.run(undo, check=True)


@case(
    "crashes", "memory dir read-only: clear 'not permitted/denied' error to the model, the session continues"
)
def test_memory_dir_read_only(api_env: FakeAnthropic, memory_folder: Path) -> None:
    memory_folder.mkdir(parents=True)
    (memory_folder / ".lock").touch()
    (memory_folder / "MEMORY.md").write_text("# Memory index\n")

    with read_only(memory_folder):
        harness, result = save_attempt(api_env, memory_folder)
        assert_next_turn_works(harness, api_env)

    assert re.fullmatch(
        # The trash, which keeps what a save can be undone by, is what the read-only folder refuses first.
        r"Memory not saved: cannot write project_a_fact\.md: .*(Permission denied|Operation not permitted)",
        result,
    )
    assert sorted(p.name for p in memory_folder.iterdir()) == [".lock", "MEMORY.md"]
