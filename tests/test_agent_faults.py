"""Every server fault and every moment of Ctrl+C leaves a conversation the API accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.core.events import Notice, Retrying, TextDelta, ToolFinished, ToolPreparing, ToolStarted
from tests.agent_harness import (
    Harness,
    assert_next_turn_works,
    ctrl_c_after,
    ctrl_c_once_running,
    interrupt_on,
)
from tests.fake_api import FakeAnthropic, Reply, error_reply, multi_tool_reply, text_reply, tool_reply
from tests.kit import result_text, tool_results_in


@pytest.fixture
def harness(api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Harness:
    monkeypatch.setenv("MINI_CLAUDE_API_TIMEOUT", "1")
    return Harness().start()


def error_lines(harness: Harness) -> list[str]:
    return [n.text for n in harness.of_type(Notice) if n.level == "error"]


def test_rate_limit_is_retried_after_retry_after(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([error_reply(429, retry_after=0.01), text_reply("after the wait")])

    ended = harness.turn("hello there")

    assert ended.final_text == "after the wait"
    assert len(api_env.requests) == 2
    assert error_lines(harness) == []


@pytest.mark.parametrize(("status", "word"), [(529, "overloaded"), (500, "api_error")])
def test_server_errors_exhaust_retries_then_one_line_and_recovery(
    harness: Harness, api_env: FakeAnthropic, status: int, word: str
) -> None:
    api_env.stream_replies.extend(error_reply(status, retry_after=0.01) for _ in range(3))

    ended = harness.turn("hello there")

    assert ended.reason == "error"
    assert len(api_env.requests) == 3, "retried twice"
    [line] = error_lines(harness)
    assert str(status) in line and word in line and "\n" not in line
    assert_next_turn_works(harness, api_env)


@pytest.mark.parametrize(("status", "hint"), [(400, "invalid_request_error"), (401, "ANTHROPIC_API_KEY")])
def test_client_errors_are_not_retried(
    harness: Harness, api_env: FakeAnthropic, status: int, hint: str
) -> None:
    api_env.stream_replies.append(error_reply(status))

    harness.turn("hello there")

    assert len(api_env.requests) == 1
    [line] = error_lines(harness)
    assert hint in line
    assert_next_turn_works(harness, api_env)


def test_without_retry_after_the_wait_is_the_sdks_backoff(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([error_reply(529), error_reply(503), text_reply("at last")])

    ended = harness.turn("hello there")

    assert ended.final_text == "at last" and error_lines(harness) == []
    first, second = harness.of_type(Retrying)  # 0.5 s then 1 s, each less up to a quarter (jitter)
    assert (first.attempt, first.reason) == (
        1,
        "API error 529 (overloaded)",
    ) and 0.375 <= first.delay_s <= 0.5
    assert (second.attempt, second.reason) == (
        2,
        "API error 503 (unavailable)",
    ) and 0.75 <= second.delay_s <= 1


@pytest.mark.parametrize(
    ("told", "requests"),
    [
        (error_reply(503, retry_after=0.01, headers={"x-should-retry": "false"}), 1),
        (error_reply(400, retry_after=0.01, headers={"x-should-retry": "true"}), 2),
    ],
    ids=["503-told-not-to", "400-told-to"],
)
def test_the_servers_x_should_retry_is_obeyed(
    harness: Harness, api_env: FakeAnthropic, told: Reply, requests: int
) -> None:
    api_env.stream_replies.extend([told, text_reply("after a retry")])

    harness.turn("hello there")

    assert len(api_env.requests) == requests
    assert len(harness.of_type(Retrying)) == requests - 1


def test_error_event_mid_text_keeps_what_was_shown(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(
        text_reply("The first part of a long answer", chunk_size=4, error_event_after=5)
    )

    ended = harness.turn("explain")

    assert ended.reason == "error"
    shown = harness.text
    assert shown and "The first part of a long answer".startswith(shown)
    assert "overloaded" in error_lines(harness)[0]
    assert_next_turn_works(harness, api_env)
    assistant = api_env.requests[-1].messages[1]
    assert assistant["role"] == "assistant" and assistant["content"][0]["text"] == shown


def test_error_event_inside_a_tool_call_pairs_it_without_running_it(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    reply = tool_reply("write_file", {"file_path": "x.txt", "content": "data " * 20}, chunk_size=8)
    reply.error_event_after = 5
    api_env.stream_replies.append(reply)

    harness.turn("write x")

    assert not (project_dir / "x.txt").exists()
    assert harness.of_type(ToolStarted) == []
    assert_next_turn_works(harness, api_env)


def test_connection_dropped_mid_json(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("partial answer that never ends", chunk_size=3, drop_after=6))

    ended = harness.turn("go on")

    assert ended.reason == "error"
    [line] = error_lines(harness)
    assert "broke mid-response" in line
    assert_next_turn_works(harness, api_env)


def test_silence_after_headers_ends_at_our_read_timeout(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("slow", stall_after=2, stall_seconds=30))
    # The SDK retries a timed-out request; script the same stall for each attempt.
    api_env.stream_replies.extend(text_reply("slow", stall_after=2, stall_seconds=30) for _ in range(2))

    ended = harness.turn("hello there")

    assert ended.reason == "error"
    [line] = error_lines(harness)
    assert "went silent for 1 s" in line and "MINI_CLAUDE_API_TIMEOUT" in line
    api_env.stream_replies.clear()
    assert_next_turn_works(harness, api_env)


def test_message_delta_without_message_stop_still_completes(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("complete enough", omit_message_stop=True))

    ended = harness.turn("hello there")

    assert ended.final_text == "complete enough"
    assert_next_turn_works(harness, api_env)


def test_unknown_event_type_is_ignored(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("still fine", unknown_event_after=2))

    ended = harness.turn("hello there")

    assert ended.reason == "done" and ended.final_text == "still fine"
    assert_next_turn_works(harness, api_env)


def test_max_tokens_with_partial_tool_json_runs_nothing_and_tells_the_model(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    cut = tool_reply(
        "write_file",
        {"file_path": "big.txt", "content": "x"},
        stop_reason="max_tokens",
        partial_tool_json='{"file_path": "big.txt", "content": "xxxxxxxx',
    )
    api_env.stream_replies.extend([cut, text_reply("I will write it in parts.")])

    ended = harness.turn("write a big file")

    assert not (project_dir / "big.txt").exists()
    assert ended.final_text == "I will write it in parts."
    [result] = tool_results_in(api_env.requests[1])
    assert result["is_error"] is True and "max_tokens" in result_text(result)
    assert api_env.requests[1].validation_error is None


def test_max_tokens_in_plain_text_ends_the_turn_with_a_notice(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    api_env.stream_replies.append(text_reply("a reply that was cut", stop_reason="max_tokens"))

    ended = harness.turn("write an essay")

    assert ended.reason == "max_tokens"
    assert any("max_tokens" in n.text for n in harness.of_type(Notice))
    assert_next_turn_works(harness, api_env)


# --- Ctrl+C at every moment ----------------------------------------------------------------


def test_ctrl_c_before_the_first_byte(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("too late", delay=3))

    with ctrl_c_after(0.3):
        ended = harness.turn("hello there")

    assert ended.reason == "interrupted"
    assert harness.text == ""
    api_env.stream_replies.clear()
    assert_next_turn_works(harness, api_env)
    first_user = api_env.requests[-1].messages[0]
    assert "hello there" in str(first_user["content"]), "the interrupted message is kept"


def test_ctrl_c_mid_text_keeps_what_was_shown(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("one two three four five six", chunk_size=4))
    harness.on_event = interrupt_on(TextDelta, nth=3)

    ended = harness.turn("count")
    harness.on_event = None

    assert ended.reason == "interrupted"
    shown = harness.text
    assert_next_turn_works(harness, api_env)
    assistant = api_env.requests[-1].messages[1]
    assert assistant["content"][0]["text"] == shown


def test_ctrl_c_mid_tool_input_pairs_the_tool_call(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.append(
        tool_reply("write_file", {"file_path": "x.txt", "content": "y" * 200}, text="Writing.", chunk_size=10)
    )
    harness.on_event = interrupt_on(ToolPreparing)

    ended = harness.turn("write x")
    harness.on_event = None

    assert ended.reason == "interrupted"
    assert not (project_dir / "x.txt").exists()
    assert_next_turn_works(harness, api_env)
    [result] = [b for b in api_env.requests[-1].messages[2]["content"] if b.get("type") == "tool_result"]
    assert result["is_error"] is True and "nterrupted" in result_text(result)


def test_ctrl_c_while_a_tool_runs_stops_it_and_answers_every_call(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    harness = Harness().start(permission_mode="bypass")
    api_env.stream_replies.append(
        tool_reply("run_shell", {"command": "sleep 20; touch finished"}),
    )

    with ctrl_c_once_running(harness):
        ended = harness.turn("run the slow thing")

    assert ended.reason == "interrupted"
    assert not (project_dir / "finished").exists()
    assert_next_turn_works(harness, api_env)
    [result] = [b for b in api_env.requests[-1].messages[2]["content"] if b.get("type") == "tool_result"]
    assert result["is_error"] is True


def test_a_tool_stopped_by_ctrl_c_still_reports_its_end_as_interrupted(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    # The front ends show a running call only as a spinner: without this end, nothing on screen
    # would say the command ran at all.
    harness = Harness().start(permission_mode="bypass")
    command = "echo start; sleep 30; echo end"
    api_env.stream_replies.append(
        multi_tool_reply([("run_shell", {"command": command}), ("read_file", {"file_path": "a.txt"})])
    )

    with ctrl_c_once_running(harness):
        ended = harness.turn("run it")

    assert ended.reason == "interrupted"
    [started] = harness.of_type(ToolStarted)
    assert (started.name, started.summary) == ("run_shell", command)
    assert harness.tool_results == [
        ToolFinished(started.tool_use_id, "run_shell", "interrupted", is_error=True)
    ]
    assert_next_turn_works(harness, api_env)
    results = [b for b in api_env.requests[-1].messages[2]["content"] if b.get("type") == "tool_result"]
    assert [r["is_error"] for r in results] == [True, True], "the call never started is answered too"


def test_ctrl_c_at_a_permission_question(api_env: FakeAnthropic, project_dir: Path) -> None:
    harness = Harness().start()

    def press_ctrl_c(request: object) -> str:
        raise KeyboardInterrupt

    harness.session.permissions.ask = press_ctrl_c
    api_env.stream_replies.append(tool_reply("write_file", {"file_path": "a.txt", "content": "a"}))

    ended = harness.turn("write a")

    assert ended.reason == "interrupted"
    assert not (project_dir / "a.txt").exists()
    assert [(r.name, r.summary, r.is_error) for r in harness.tool_results] == [
        ("write_file", "interrupted", True)
    ]
    assert_next_turn_works(harness, api_env)
