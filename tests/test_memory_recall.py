"""Recall on its background thread, driven through a real model client against the fake server:
when it asks the side model, that it never makes the agent wait, and that each result lands once."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_claude.core import config
from mini_claude.core.config import load_settings
from mini_claude.core.debug_log import setup_logging
from mini_claude.llm.client import ModelClient
from mini_claude.memory.recall.memory_recall import SESSION_INJECTION_BUDGET_BYTES, MemoryRecall
from mini_claude.memory.recall.selection import MANIFEST_MAX_MEMORIES, SELECTION_MAX_TOKENS
from mini_claude.memory.store.memory_store import MemoryStore
from tests.agent_harness import wait_for_recalls
from tests.fake_api import FakeAnthropic, error_reply, text_reply
from tests.kit import choose, side_queries

QUESTION = "how do we deploy the service?"
NOTHING = '{"selected_memories": []}'


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "memory")


@pytest.fixture
def recall(api_env: FakeAnthropic, store: MemoryStore) -> Iterator[MemoryRecall]:
    recall = MemoryRecall(store, ModelClient(load_settings()))
    yield recall
    api_env.close()  # ends side queries still waiting on a delayed reply
    assert wait_for_recalls()  # stale ones included


def save(store: MemoryStore, name: str, body: str = "Body.\n") -> str:
    return store.save(name=name, description=f"about {name}", memory_type="project", body=body).path.name


@pytest.fixture
def debug_log() -> Iterator[Path]:
    """The real debug log (under the test's private HOME), for this test only."""
    root = logging.getLogger()
    ours = logging.getLogger("mini_claude")
    earlier = [h for h in root.handlers if getattr(h, "_mini_claude", False)]
    levels = (root.level, ours.level)
    for handler in earlier:
        root.removeHandler(handler)
    setup_logging()
    yield config.log_file()
    for handler in [h for h in root.handlers if getattr(h, "_mini_claude", False)]:
        root.removeHandler(handler)
        handler.close()
    for handler in earlier:
        root.addHandler(handler)
    root.setLevel(levels[0])
    ours.setLevel(levels[1])


def log_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


# --- when recall runs ----------------------------------------------------------------------------


@pytest.mark.parametrize("message", ["hello", "refactor", "  yes  ", "部", "ok!", "/tmp/some/path.py"])
def test_a_single_word_message_skips_recall(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore, message: str
) -> None:
    save(store, "deploys")

    recall.start(message)

    assert wait_for_recalls(1)
    assert side_queries(api_env) == [] and recall.take_ready() is None


@pytest.mark.parametrize("message", ["部署流程", "デプロイ", "배포 절차", "deploy now", "deploy\tnow"])
def test_cjk_words_and_several_words_are_worth_a_recall(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore, message: str
) -> None:
    file_name = save(store, "deploys")
    api_env.plain_replies.append(choose(file_name))

    recall.start(message)

    assert wait_for_recalls()
    [query] = side_queries(api_env)
    assert message in query.messages[0]["content"]
    assert recall.take_ready() is not None


def test_no_memory_files_means_no_recall(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore
) -> None:
    recall.start(QUESTION)  # no memory directory at all
    store.root.mkdir(parents=True)
    recall.start(QUESTION)  # an empty one
    (store.root / "MEMORY.md").write_text("# Memory index\n")
    (store.root / "notes.txt").write_text("not a memory\n")
    recall.start(QUESTION)  # only the index and a non-memory file

    assert wait_for_recalls(1)
    assert side_queries(api_env) == [] and recall.take_ready() is None


def test_recall_stops_once_60_kb_of_memories_were_injected(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore
) -> None:
    names = [save(store, f"memory {i}", body="x" * 5000) for i in range(20)]
    injected = 0
    rounds = 0
    while injected < SESSION_INJECTION_BUDGET_BYTES:
        assert rounds < 5, f"only {injected} bytes injected after {rounds} rounds"
        api_env.plain_replies.append(choose(*names[rounds * 5 : rounds * 5 + 5]))
        recall.start(QUESTION)
        assert wait_for_recalls()
        recalled = recall.take_ready()
        assert recalled is not None
        injected += sum(len(block["text"].encode()) for block in recalled.blocks)
        rounds += 1
    asked = len(side_queries(api_env))

    recall.start("and how do we roll back?")

    assert wait_for_recalls(1)
    assert len(side_queries(api_env)) == asked
    assert injected < SESSION_INJECTION_BUDGET_BYTES + 5000  # overshoots by one memory at most


# --- never blocking, each result once -----------------------------------------------------------


def test_take_ready_never_waits_for_a_slow_side_query(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore
) -> None:
    file_name = save(store, "deploys")
    api_env.plain_replies.append(choose(file_name, held=True))  # no answer until the fake closes
    recall.start(QUESTION)
    api_env.wait_for_requests(1)

    assert recall.take_ready() is None  # (waiting for the answer, it would get it at the close)


def test_a_result_is_injected_once_and_not_offered_again(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore
) -> None:
    first = save(store, "deploys")
    second = save(store, "rollbacks")
    api_env.plain_replies.extend([choose(first), choose(first, second)])

    recall.start(QUESTION)
    assert wait_for_recalls()
    recalled = recall.take_ready()
    again = recall.take_ready()
    recall.start("and the rollback procedure?")
    assert wait_for_recalls()
    later = recall.take_ready()

    assert recalled is not None and recalled.file_names == [first]
    assert again is None
    assert later is not None and later.file_names == [second]
    second_manifest = side_queries(api_env)[1].messages[0]["content"]
    assert second in second_manifest and first not in second_manifest  # surfaced ones are dropped


def test_a_newer_message_replaces_an_unfinished_recall_whose_result_is_dropped(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore
) -> None:
    stale = save(store, "deploys")
    fresh = save(store, "rollbacks")
    stale_answer = choose(stale, held=True)
    api_env.plain_replies.extend([stale_answer, choose(fresh)])

    recall.start(QUESTION)
    api_env.wait_for_requests(1)
    recall.start("what about rollbacks then?")
    stale_answer.release.set()  # answered only after the newer message
    assert wait_for_recalls()
    assert wait_for_recalls()  # stale ones included

    recalled = recall.take_ready()
    assert recalled is not None and recalled.file_names == [fresh]
    assert recall.take_ready() is None


def test_a_settled_result_not_yet_taken_is_dropped_by_a_later_message(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore
) -> None:
    """What a recall chose for one message but did not reach its turn is not pinned onto the next:
    that message's own recall decides, and may choose it again (it was never spent)."""
    settled = save(store, "deploys")
    api_env.plain_replies.extend([choose(settled), text_reply(NOTHING)])

    recall.start(QUESTION)
    assert wait_for_recalls()
    recall.start("a later message while nothing was taken")
    assert wait_for_recalls()

    assert recall.take_ready() is None
    api_env.plain_replies.append(choose(settled))
    recall.start("and the deploy question again")
    assert wait_for_recalls()
    recalled = recall.take_ready()
    assert recalled is not None and recalled.file_names == [settled]


# --- failures are quiet ---------------------------------------------------------------------------


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.parametrize(
    "reply",
    [
        error_reply(500),
        error_reply(529),
        error_reply(400, message="bad request"),
        text_reply("timeout", delay=1.5),
        text_reply("I cannot decide, sorry."),
        text_reply("{not json at all ]]"),
        choose("project_made_up.md", "../../etc/passwd"),
    ],
    ids=["500", "529", "400", "timeout", "prose", "junk", "hallucinated"],
)
def test_a_failed_or_useless_side_query_injects_nothing_and_logs_one_line(
    api_env: FakeAnthropic,
    store: MemoryStore,
    debug_log: Path,
    monkeypatch: pytest.MonkeyPatch,
    reply: object,
) -> None:
    monkeypatch.setenv("MINI_CLAUDE_SIDE_QUERY_TIMEOUT", "0.5")
    recall = MemoryRecall(store, ModelClient(load_settings()))
    save(store, "deploys")
    before = log_lines(debug_log)
    api_env.plain_replies.append(reply)

    recall.start(QUESTION)

    assert wait_for_recalls()
    assert recall.take_ready() is None
    # The failure is one line of the recall's log (the client's own start-up line may precede it,
    # and a line for each retry of a 5xx).
    new_lines = [
        line
        for line in log_lines(debug_log)[len(before) :]
        if "model client ready" not in line and "retrying in" not in line
    ]
    assert len(new_lines) == 1, new_lines
    assert "mini_claude.recall" in new_lines[0]


def test_the_side_query_is_small_non_streaming_without_tools_and_holds_manifest_and_query(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore
) -> None:
    file_name = save(store, "deploys")
    api_env.plain_replies.append(text_reply(NOTHING))

    recall.start(QUESTION)

    assert wait_for_recalls()
    [query] = side_queries(api_env)
    assert query.validation_error is None
    assert query.body.get("stream") in (None, False)
    assert "tools" not in query.body
    assert query.body["max_tokens"] == SELECTION_MAX_TOKENS <= 1024
    [message] = query.messages
    assert message["role"] == "user"
    assert QUESTION in message["content"]
    assert f"[project] {file_name} (today): about deploys" in message["content"]
    assert "selected_memories" in str(query.system)


def test_a_message_matching_no_memory_offers_the_newest_ones_the_manifest_holds(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore
) -> None:
    store.root.mkdir(parents=True)
    now = time.time()
    total = MANIFEST_MAX_MEMORIES + 30
    for i in range(total):
        path = store.root / f"project_m{i:03}.md"
        path.write_text(f"---\nname: m{i}\ndescription: number {i}\ntype: project\n---\nx\n")
        os.utime(path, (now - 1000 + i, now - 1000 + i))
    api_env.plain_replies.append(text_reply(NOTHING))

    recall.start(QUESTION)

    assert wait_for_recalls()
    content = side_queries(api_env)[0].messages[0]["content"]
    offered = [i for i in range(total) if f"project_m{i:03}.md" in content]
    assert offered == list(range(30, total))


def test_a_broken_or_oddly_named_file_does_not_stop_recall_of_the_others(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore
) -> None:
    good = save(store, "deploys")
    (store.root / "project_broken.md").write_text("---\nno header, never closed\n")
    header = b"---\nname: odd\ndescription: odd file name\ntype: user\n---\nBody\n"
    for odd_name in (b"user_\xe9t\xe9.md", b"user_line\nbreak.md"):  # not UTF-8; a line break
        with open(os.path.join(os.fsencode(store.root), odd_name), "wb") as handle:
            handle.write(header)
    api_env.plain_replies.append(choose(good))

    recall.start(QUESTION)

    assert wait_for_recalls()
    recalled = recall.take_ready()
    assert recalled is not None and recalled.file_names == [good]
    manifest = side_queries(api_env)[0].messages[0]["content"].split("<memories>")[1]
    assert [line for line in manifest.splitlines() if line.startswith("[")] == [
        f"[project] {good} (today): about deploys"
    ]


def test_a_recall_that_gets_no_thread_is_skipped_and_the_next_one_runs(
    recall: MemoryRecall, api_env: FakeAnthropic, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    file_name = save(store, "deploys")
    api_env.plain_replies.append(choose(file_name))
    real_start = threading.Thread.start
    refused: list[str] = []

    def start_refusing_the_first_recall(thread: threading.Thread) -> None:
        if thread.name == "memory-recall" and not refused:
            refused.append(thread.name)
            raise RuntimeError("can't start new thread")
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start_refusing_the_first_recall)

    recall.start(QUESTION)
    assert wait_for_recalls() and refused and side_queries(api_env) == []

    recall.start(QUESTION + " again")
    assert wait_for_recalls()
    assert len(side_queries(api_env)) == 1 and recall.take_ready() is not None
