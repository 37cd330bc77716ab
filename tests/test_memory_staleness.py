"""Memories that may no longer hold: `paths:` changed after the memory (git history in a
repository, the file's time outside one; an edit not committed yet counts, a fresh checkout does
not), a path gone, `expires:` past or a condition; said in the recall reminder, marked in
`/memory`, offered first by tidy."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from mini_claude.memory.provenance import Provenance
from mini_claude.memory.recall.memory_recall import MemoryRecall
from mini_claude.memory.scopes import MemoryScopes
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.tidy.review import TidyReview
from tests.agent_harness import Harness, hold_replies_until_recall_settles, wait_for_recalls
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import (
    choose,
    main_calls,
    prompt_index_lines,
    reminders_in,
    side_queries,
    side_query_message,
    system_text,
)
from tests.test_memory_agent import memory_command
from tests.tidy_kit import model, read_answer

DAY = 86_400
NOW = time.time()


def git(repo: Path, *args: str, at: float = NOW) -> str:
    stamp = f"@{int(at)} +0000"
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}  # fmt: skip
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def commit(repo: Path, path: str, text: str, at: float) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    git(repo, "add", path, at=at)
    git(repo, "commit", "-qm", f"change {path}", at=at)


@pytest.fixture
def repo(project_dir: Path) -> Path:
    git(project_dir, "init", "-q")
    commit(project_dir, "src/db.py", "connect()\n", NOW - 10 * DAY)
    return project_dir


def about_db(
    store: MemoryStore, *, saved: float = NOW - 8 * DAY, paths: str = "src/db.py", **extra: str
) -> Path:
    """A memory about `paths`, written by the model `saved` seconds since the epoch."""
    path = store.save(
        name="database", description="how the app talks to the database", memory_type="project",
        body="It connects once, at start.\n", extra={"paths": paths, **extra},
        by=Provenance("model"), now=saved,
    ).path  # fmt: skip
    os.utime(path, (saved, saved))
    return path


def recalled_reminder(api_env: FakeAnthropic, store: MemoryStore, root: Path, file_name: str) -> str:
    recall = MemoryRecall(MemoryScopes(store, project_root=root), model(api_env))
    api_env.plain_replies.append(choose(file_name))
    recall.start("how does the app talk to the database?")
    assert wait_for_recalls()
    recalled = recall.take_ready()
    assert recalled is not None
    [block] = recalled.blocks
    return str(block["text"])


@pytest.fixture
def store(project_dir: Path) -> MemoryStore:
    return MemoryStore(project_dir.parent / "memory")


def test_a_file_committed_after_the_memory_gets_a_line_in_the_reminder(
    api_env: FakeAnthropic, repo: Path, store: MemoryStore
) -> None:
    memory = about_db(store)
    commit(repo, "src/db.py", "pool()\n", NOW - 5 * DAY)

    reminder = recalled_reminder(api_env, store, repo, memory.name)

    assert "src/db.py changed 3 days after this memory: verify before relying on it." in reminder
    assert "It connects once, at start." in reminder


def test_a_fresh_checkout_of_an_unchanged_file_is_not_a_change(
    api_env: FakeAnthropic, repo: Path, store: MemoryStore
) -> None:
    memory = about_db(store)
    os.utime(repo / "src/db.py", (NOW, NOW))  # as a checkout or a clone leaves it: new, same bytes

    reminder = recalled_reminder(api_env, store, repo, memory.name)

    assert "src/db.py" not in reminder.split("Memory file:")[0]  # no line about it before the text


def test_an_edit_not_committed_yet_counts_by_the_files_time(
    api_env: FakeAnthropic, repo: Path, store: MemoryStore
) -> None:
    memory = about_db(store)
    (repo / "src/db.py").write_text("pool(size=4)\n")
    os.utime(repo / "src/db.py", (NOW - 2 * DAY, NOW - 2 * DAY))

    reminder = recalled_reminder(api_env, store, repo, memory.name)

    assert "src/db.py changed 6 days after this memory" in reminder


def test_a_path_gone_or_outside_the_project_is_said(
    api_env: FakeAnthropic, repo: Path, store: MemoryStore
) -> None:
    memory = about_db(store, paths="src/gone.py, ../elsewhere.py, /etc/hostname")

    reminder = recalled_reminder(api_env, store, repo, memory.name)

    assert (
        "src/gone.py, which this memory is about, no longer exists: verify before relying on it." in reminder
    )
    assert "../elsewhere.py is outside the project: not checked." in reminder
    assert "/etc/hostname is outside the project: not checked." in reminder


def test_outside_a_repository_the_files_time_counts(
    api_env: FakeAnthropic, project_dir: Path, store: MemoryStore
) -> None:
    (project_dir / "schema.sql").write_text("create table t;\n")
    os.utime(project_dir / "schema.sql", (NOW - 1 * DAY, NOW - 1 * DAY))
    memory = about_db(store, paths="schema.sql")

    reminder = recalled_reminder(api_env, store, project_dir, memory.name)

    assert "schema.sql changed 7 days after this memory" in reminder


def test_a_memorys_paths_in_a_list_are_read_too(
    api_env: FakeAnthropic, repo: Path, store: MemoryStore
) -> None:
    store.root.mkdir(parents=True)
    path = store.root / "project_db.md"
    header = "---\nname: db\ndescription: the database\ntype: project\n"
    path.write_text(header + "paths:\n  - src/db.py\n  - src/gone.py\n---\nx\n")
    os.utime(path, (NOW - 8 * DAY, NOW - 8 * DAY))
    commit(repo, "src/db.py", "pool()\n", NOW - 1 * DAY)

    reminder = recalled_reminder(api_env, store, repo, path.name)

    assert "src/db.py changed 7 days after" in reminder and "src/gone.py, which this memory" in reminder


def test_memory_marks_stale_and_expired_ones_and_recall_skips_the_expired(
    harness: Harness, api_env: FakeAnthropic, repo: Path
) -> None:
    store = harness.session.store
    about_db(store)
    commit(repo, "src/db.py", "pool()\n", NOW - 5 * DAY)
    store.save(name="freeze", description="code freeze for the launch", memory_type="project", body="x\n",
               extra={"expires": "2020-01-31"})  # fmt: skip
    store.save(name="flag", description="the beta flag stays on", memory_type="project", body="x\n",
               extra={"expires": "until the beta ends"})  # fmt: skip
    api_env.plain_replies.append(choose())
    api_env.stream_replies.append(text_reply("Hi."))

    harness.turn("what is going on with the launch freeze and the database?")
    api_env.wait_for_requests(2)

    listing = memory_command(harness, "/memory")
    assert "(stale: src/db.py changed 3 days after it)" in listing
    assert "(expired 2020-01-31: no longer recalled)" in listing
    assert "(holds until: until the beta ends)" in listing
    manifest = side_query_message(side_queries(api_env)[0])
    assert "project_database.md" in manifest and "project_freeze.md" not in manifest
    index = "\n".join(prompt_index_lines(system_text(main_calls(api_env)[0])))
    assert "database" in index and "freeze" not in index


def test_a_condition_the_user_wrote_reaches_the_model_with_the_memory(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    path = harness.session.store.save(
        name="flag", description="the beta flag stays on", memory_type="project", body="Keep BETA=1.\n",
        extra={"expires": "when the beta ends"},
    ).path  # fmt: skip
    api_env.plain_replies.append(choose(path.name))
    api_env.responder = hold_replies_until_recall_settles
    api_env.stream_replies.extend([tool_reply("list_files", {}), text_reply("Keep it on.")])

    harness.turn("should the beta flag stay on?")

    [reminder] = reminders_in(main_calls(api_env)[1])
    assert "This memory holds until: when the beta ends. If that has happened, do not rely on it" in reminder


def test_tidy_offers_the_memories_that_may_no_longer_hold_first(
    api_env: FakeAnthropic, repo: Path, store: MemoryStore
) -> None:
    for name in ("alpha", "beta", "gamma"):
        store.save(name=name, description=f"about {name}", memory_type="project", body="x\n")
    about_db(store)
    commit(repo, "src/db.py", "pool()\n", NOW - 5 * DAY)
    api_env.plain_replies.append(read_answer())

    TidyReview(store, model(api_env), project_root=repo).propose()

    headers = side_query_message(side_queries(api_env)[0])
    lines = [line for line in headers.splitlines() if line.startswith("project_")]
    assert lines[0].startswith("project_database.md")
    assert lines[0].endswith("MAY NO LONGER HOLD: src/db.py changed 3 days after it")
    assert not any("MAY NO LONGER HOLD" in line for line in lines[1:])
