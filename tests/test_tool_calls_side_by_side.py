"""One reply's tool calls: at most maxToolCallsPerReply of them run (the rest answered unrun); the
read-only ones run side by side, their results in call order; questions never interleave."""

from __future__ import annotations

import json
import resource
import threading
from pathlib import Path

import pytest

from mini_claude.agent.side_by_side import relayed
from mini_claude.core.events import Notice, ToolFinished, ToolStarted
from mini_claude.safety.permissions import Answer, PermissionRequest
from tests.agent_harness import Harness
from tests.fake_api import FakeAnthropic, multi_tool_reply, text_reply
from tests.kit import main_calls, result_text, tool_results_in


def test_five_thousand_calls_in_one_reply_run_64_and_the_turn_goes_on(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "big.txt").write_text("x" * 200_000 + "\n", encoding="utf-8")
    calls = [("read_file", {"file_path": "big.txt"})] * 5000
    api_env.stream_replies.extend([multi_tool_reply(calls, chunk_size=4096), text_reply("done reading")])

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    ended = harness.turn("read it a lot")
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before

    assert ended.reason == "done" and ended.final_text == "done reading"
    results = tool_results_in(main_calls(api_env)[1])
    assert len(results) == 5000  # every call answered, in order
    assert [r["tool_use_id"] for r in results] == [
        b["id"] for b in main_calls(api_env)[1].messages[-2]["content"] if b["type"] == "tool_use"
    ]
    assert sum("Not run: too many calls in one reply" in result_text(r) for r in results) == 4936
    assert len(harness.of_type(ToolStarted)) == 64  # no screen line for a call that did not run
    [told] = [n for n in harness.of_type(Notice) if "were not run" in n.text]
    assert "4936 tool calls" in told.text and "maxToolCallsPerReply" in told.text
    next_request = len(json.dumps(main_calls(api_env)[1].body))
    assert next_request < 20 * 2**20, f"the next request holds {next_request:,} bytes"
    assert grown < 300 * 2**20, f"the process grew by {grown:,} bytes"  # 5,000 reads: over 1 GB


def test_the_limit_is_a_setting(harness: Harness, api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude" / "settings.json").write_text('{"maxToolCallsPerReply": 2}', encoding="utf-8")
    harness.start(files=True)
    (project_dir / "a.txt").write_text("a\n", encoding="utf-8")
    api_env.stream_replies.extend(
        [multi_tool_reply([("read_file", {"file_path": "a.txt"})] * 3), text_reply("ok")]
    )

    harness.turn("read")

    texts = [result_text(r) for r in tool_results_in(main_calls(api_env)[1])]
    assert ["Not run: too many" in text for text in texts] == [False, False, True]


def test_reads_run_side_by_side_and_answer_in_call_order(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    names = [f"f{i}.txt" for i in range(6)]
    for i, name in enumerate(names):
        (project_dir / name).write_text(f"content {i}\n", encoding="utf-8")
    threads: set[str] = set()
    harness.on_event = lambda event: threads.add(threading.current_thread().name)
    api_env.stream_replies.extend(
        [multi_tool_reply([("read_file", {"file_path": name}) for name in names]), text_reply("read all")]
    )

    assert harness.turn("read them").reason == "done"

    results = [result_text(r) for r in tool_results_in(main_calls(api_env)[1])]
    assert [f"content {i}" in text for i, text in enumerate(results)] == [True] * 6
    assert threads == {threading.main_thread().name}, "the screen hears only from the turn's thread"
    started = [e.tool_use_id for e in harness.of_type(ToolStarted)]
    finished = [e.tool_use_id for e in harness.of_type(ToolFinished)]
    assert sorted(started) == sorted(finished) and len(started) == 6


def test_a_write_between_reads_runs_alone_in_its_place(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("old\n", encoding="utf-8")
    harness.start(permission_mode="accept-edits")
    calls = [
        ("read_file", {"file_path": "a.txt"}),
        ("write_file", {"file_path": "a.txt", "content": "new\n"}),
        ("read_file", {"file_path": "a.txt"}),
    ]
    api_env.stream_replies.extend([multi_tool_reply(calls), text_reply("ok")])

    harness.turn("go")

    texts = [result_text(r) for r in tool_results_in(main_calls(api_env)[1])]
    assert "old" in texts[0] and "new" in texts[2]


def test_reads_that_ask_ask_one_at_a_time_on_the_turns_thread(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("x.txt", "y.txt", "z.txt"):
        (outside / name).write_text(name + "\n", encoding="utf-8")
    asked_on: list[str] = []
    harness.answers = ["y", "y", "y"]

    def answer(request: PermissionRequest) -> Answer:
        asked_on.append(threading.current_thread().name)
        return harness._answer(request)  # type: ignore[return-value]

    harness.session.permissions.ask = relayed(answer)  # as the session wraps the UI's question
    calls = [("read_file", {"file_path": str(outside / name)}) for name in ("x.txt", "y.txt", "z.txt")]
    api_env.stream_replies.extend([multi_tool_reply(calls), text_reply("ok")])

    ended = harness.turn("read outside")

    assert ended.reason == "done"
    assert len(harness.questions) == 3
    assert asked_on == [threading.main_thread().name] * 3  # relayed: asked by the turn's thread
    texts = [result_text(r) for r in tool_results_in(main_calls(api_env)[1])]
    assert [name in text for name, text in zip(("x.txt", "y.txt", "z.txt"), texts, strict=True)] == [True] * 3


@pytest.mark.parametrize("workers", ["1", "4"])
def test_one_at_a_time_when_asked(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    monkeypatch.setenv("MINI_CLAUDE_PARALLEL_TOOLS", workers)
    (project_dir / "a.txt").write_text("a\n", encoding="utf-8")
    api_env.stream_replies.extend(
        [multi_tool_reply([("read_file", {"file_path": "a.txt"})] * 3), text_reply("ok")]
    )

    assert harness.turn("read").reason == "done"
    assert len(tool_results_in(main_calls(api_env)[1])) == 3
