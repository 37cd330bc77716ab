"""Recall history: each memory that reaches a conversation is counted, with when, in
`.recall-history.json` beside the memories; `/memory` and `mini-claude memory list` show it."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from mini_claude.core.config import log_file, project_memory_dir
from mini_claude.memory.listing import list_lines
from mini_claude.memory.recall.history import HISTORY_FILE, RecallHistory
from mini_claude.memory.store import memory_folder
from tests.agent_harness import Harness, wait_for_recalls
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, RecordedRequest, Reply, text_reply, tool_reply
from tests.kit import choose, main_calls, memory_text, seed_memories, wait_for_log_line, wait_until

DAY = 86_400


def wait_for_history_writes(timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    for thread in threading.enumerate():
        if thread.name == "recall-history":
            thread.join(max(0.0, deadline - time.monotonic()))


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    return project_memory_dir(str(project_dir))


def recall_once(fake: FakeAnthropic, project_dir: Path, file_name: str) -> None:
    """One session whose message recalls `file_name` (into its second request: the first is held
    until the recall is done, and the reminder goes in at the next call)."""
    (project_dir / "deploy.sh").write_text("echo deploy\n")
    fake.plain_replies.append(choose(file_name))
    fake.stream_replies.extend(
        [tool_reply("read_file", {"file_path": "deploy.sh"}), text_reply("On Thursdays.")]
    )

    def hold_until_recalled(request: RecordedRequest) -> None:
        if request.stream:
            wait_for_recalls()

    fake.responder = hold_until_recalled
    harness = Harness().start()
    harness.turn("how do we deploy the payments service?")
    wait_for_history_writes()


def test_memories_that_reach_the_conversation_are_counted_across_sessions(
    api_env: FakeAnthropic, project_dir: Path, memory_dir: Path
) -> None:
    store = seed_memories(
        memory_dir,
        {"project_deploys.md": memory_text("deploys", "how and when we deploy the payments service")},
    )
    recall_once(api_env, project_dir, "project_deploys.md")
    recall_once(api_env, project_dir, "project_deploys.md")

    saved = json.loads((memory_dir / HISTORY_FILE).read_text())
    assert saved["memories"]["project_deploys.md"]["count"] == 2
    assert time.time() - saved["memories"]["project_deploys.md"]["last"] < 60
    assert (
        "[project] deploys — how and when we deploy the payments service  (project_deploys.md)"
        "  (recalled 2 times, last today)" in (list_lines(store))
    )
    assert (memory_dir / "project_deploys.md").read_text().count("recalled") == 0  # the memory file untouched


def test_memory_list_shows_how_often_and_when_last(project_dir: Path, memory_dir: Path) -> None:
    seed_memories(memory_dir, {
        "user_role.md": memory_text("role", "backend engineer", "user"),
        "project_ci.md": memory_text("ci", "the slow suite"),
        "project_new.md": memory_text("new", "never recalled yet"),
    })  # fmt: skip
    now = time.time()
    history = {
        "format": 1,
        "since": now - 30 * DAY,
        "memories": {
            "user_role.md": {"count": 3, "last": now - 2 * DAY},
            "project_ci.md": {"count": 1, "last": now - DAY},
        },
    }
    (memory_dir / HISTORY_FILE).write_text(json.dumps(history))
    lines = Cli(project_dir).run("memory", "list").stdout.splitlines()

    assert "[user] role — backend engineer  (user_role.md)  (recalled 3 times, last 2 days ago)" in lines
    assert "[project] ci — the slow suite  (project_ci.md)  (recalled once, yesterday)" in lines
    assert "[project] new — never recalled yet  (project_new.md)" in lines


def test_the_history_forgets_memories_that_are_gone(memory_dir: Path) -> None:
    store = seed_memories(
        memory_dir, {"project_a.md": memory_text("a", "first"), "project_b.md": memory_text("b", "second")}
    )
    history = RecallHistory(memory_dir)
    history.record(["project_a.md", "project_b.md"])
    store.delete(next(m for m in store.scan() if m.file_name == "project_b.md"))
    history.record(["project_a.md"])

    entries = history.load().entries
    assert set(entries) == {"project_a.md"} and entries["project_a.md"].count == 2


def test_one_recall_of_the_same_memory_twice_counts_once(memory_dir: Path) -> None:
    seed_memories(memory_dir, {"project_a.md": memory_text("a", "first")})
    history = RecallHistory(memory_dir, clock=lambda: 1_000_000.0)
    history.record(["project_a.md", "project_a.md"])
    assert history.load().entries["project_a.md"].count == 1
    assert history.load().since == 1_000_000.0


def test_an_unused_memory_needs_a_history_that_covers_the_90_days(memory_dir: Path) -> None:
    seed_memories(memory_dir, {"project_a.md": memory_text("a", "first")})
    now = time.time()
    old = now - 100 * DAY
    young_history = RecallHistory(memory_dir, clock=lambda: now - 10 * DAY)
    young_history.record(["project_a.md"], at=now - 10 * DAY)
    assert not young_history.load().unused_for_long("project_b.md", old, now)  # history too young to tell
    (memory_dir / HISTORY_FILE).write_text(json.dumps({"format": 1, "since": old, "memories": {}}))
    snapshot = RecallHistory(memory_dir).load()
    assert snapshot.unused_for_long("project_a.md", old, now)
    assert not snapshot.unused_for_long("project_a.md", now - 5 * DAY, now)  # saved recently


def lock_is_waited_for(lock_file: Path) -> bool:
    """Whether a process is blocked taking `lock_file`'s lock (a "->" line of /proc/locks)."""
    inode = os.stat(lock_file).st_ino
    with open("/proc/locks") as locks:
        return any(" -> " in line and line.split()[6].endswith(f":{inode}") for line in locks)


def test_print_mode_counts_its_recall_though_it_exits_while_another_session_holds_the_lock(
    api_env: FakeAnthropic, project_dir: Path, memory_dir: Path
) -> None:
    seed_memories(
        memory_dir,
        {"project_deploys.md": memory_text("deploys", "how and when we deploy the payments service")},
    )
    (project_dir / "deploy.sh").write_text("echo deploy\n")
    holders: list[threading.Thread] = []
    waited: list[bool] = []

    def hold_the_lock() -> None:  # another session saving a memory, say, until the count waits
        with memory_folder.exclusive_lock(memory_dir):
            waited.append(wait_until(lambda: lock_is_waited_for(memory_dir / memory_folder.LOCK_FILE)))

    def script(request: RecordedRequest) -> Reply | None:
        if not request.stream:
            return choose("project_deploys.md")
        if len(request.messages) > 1:
            return text_reply("On Thursdays.")  # the reply that ends the run: it exits right after
        # The first call is answered once the recall has been (so it lands in the second call),
        # and from then on the folder is locked until the count at the exit waits for it.
        wait_for_log_line(log_file(), "memory recall chose ['project_deploys.md']")
        holders.append(threading.Thread(target=hold_the_lock))
        holders[-1].start()
        return tool_reply("read_file", {"file_path": "deploy.sh"})

    api_env.responder = script
    result = Cli(project_dir).run("-p", "how do we deploy the payments service?")
    for holder in holders:
        holder.join()

    assert waited == [True]
    assert result.returncode == 0, result.stderr
    assert "On Thursdays." in result.stdout and len(main_calls(api_env)) == 2
    saved = json.loads((memory_dir / HISTORY_FILE).read_text())
    assert saved["memories"]["project_deploys.md"]["count"] == 1
