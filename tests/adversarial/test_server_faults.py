"""Every fault the fake model server can produce, each followed by a normal turn whose request the
fake validates: the fault ends in one clear line (or a silent retry), runs no half-received tool
call, and leaves a conversation the API accepts. (tests/test_agent_faults.py has the Ctrl+C cases.)"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mini_claude.core.events import Notice, Retrying, ToolStarted
from tests.adversarial.cases import case
from tests.agent_harness import Harness, assert_next_turn_works, wait_for_recalls
from tests.fake_api import FakeAnthropic, Reply, error_reply, message_object, text_reply, tool_reply
from tests.kit import choose, main_calls, result_text, side_queries

API_TIMEOUT_S = 1


def write_call(**faults: object) -> Reply:
    """The model starts a write_file call (which must never run when its stream breaks)."""
    return tool_reply("write_file", {"file_path": "x.txt", "content": "data " * 20}, chunk_size=8, **faults)


@dataclass
class Fault:
    expected: str  # for the faults table
    replies: Callable[[], list[Reply]]
    reason: str  # how the turn ends
    error: tuple[str, ...] = ()  # words of the one error line, or () when the user sees no error
    requests: int = 1  # streamed requests the turn makes (with its retries)
    final_text: str | None = None
    after: Callable[[Harness, FakeAnthropic], None] | None = None  # checks once the next turn is done


def nothing_was_shown(harness: Harness, fake: FakeAnthropic) -> None:
    [message] = main_calls(fake)[-1].messages  # no empty assistant message: the two user turns merged
    texts = [block["text"] for block in message["content"]]
    assert texts[0] == "write x.txt please" and texts[-1] == "are you still there?"


def shown_text_is_kept(harness: Harness, fake: FakeAnthropic) -> None:
    assistant = main_calls(fake)[-1].messages[1]
    assert assistant["role"] == "assistant"
    text = assistant["content"][0]["text"]
    assert text and "The first part of a long answer".startswith(text)


def cut_tool_call_answered_as_not_run(harness: Harness, fake: FakeAnthropic) -> None:
    [result] = tool_results_in_messages(main_calls(fake)[-1].messages[2])
    assert result["is_error"] is True and "it was not run" in result_text(result)


def model_told_about_max_tokens(harness: Harness, fake: FakeAnthropic) -> None:
    [result] = tool_results_in_messages(main_calls(fake)[1].messages[-1])
    assert result["is_error"] is True and "max_tokens" in result_text(result)


def tool_results_in_messages(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


FAULTS = {
    "rate_limit_429_retry_after": Fault(
        "retried after retry-after, the answer arrives, no error shown",
        lambda: [error_reply(429, retry_after=0.01), text_reply("after the wait")],
        "done",
        requests=2,
        final_text="after the wait",
    ),
    "overloaded_529_three_times": Fault(
        "3 attempts, then one line: API error 529 overloaded_error (gave up after 2 retries)",
        lambda: [error_reply(529, retry_after=0.01) for _ in range(3)],
        "error",
        ("API error 529", "overloaded_error", "gave up after 2 retries"),
        requests=3,
    ),
    "server_error_500_three_times": Fault(
        "3 attempts, then one line: API error 500 api_error (gave up after 2 retries)",
        lambda: [error_reply(500, retry_after=0.01) for _ in range(3)],
        "error",
        ("API error 500", "api_error", "gave up after 2 retries"),
        requests=3,
    ),
    "bad_request_400_not_retried": Fault(
        "1 attempt, one line naming invalid_request_error",
        lambda: [error_reply(400)],
        "error",
        ("API error 400", "invalid_request_error"),
    ),
    "unauthorized_401_not_retried": Fault(
        "1 attempt, one line: authentication failed, check ANTHROPIC_API_KEY",
        lambda: [error_reply(401)],
        "error",
        ("Authentication failed (401)", "ANTHROPIC_API_KEY"),
    ),
    "error_event_before_any_text": Fault(
        "one line 'reported an error mid-response: Overloaded'; no empty reply kept",
        lambda: [text_reply("never shown", error_event_after=1)],
        "error",
        ("reported an error mid-response", "Overloaded"),
        after=nothing_was_shown,
    ),
    "error_event_within_text": Fault(
        "one line; the text shown so far is kept in the conversation",
        lambda: [text_reply("The first part of a long answer", chunk_size=4, error_event_after=5)],
        "error",
        ("reported an error mid-response", "Overloaded"),
        after=shown_text_is_kept,
    ),
    "error_event_within_tool_use": Fault(
        "one line; the half-received write_file is answered as not run, no file",
        lambda: [write_call(error_event_after=5)],
        "error",
        ("reported an error mid-response",),
        after=cut_tool_call_answered_as_not_run,
    ),
    "connection_dropped_mid_json": Fault(
        "one line 'connection … broke mid-response'; the cut tool call is not run",
        lambda: [write_call(drop_after=5)],
        "error",
        ("broke mid-response",),
        after=cut_tool_call_answered_as_not_run,
    ),
    "headers_then_silence": Fault(
        f"gives up after MINI_CLAUDE_API_TIMEOUT={API_TIMEOUT_S} s: one line naming the variable",
        lambda: [text_reply("slow", stall_after=0, stall_seconds=30) for _ in range(3)],
        "error",
        (f"went silent for {API_TIMEOUT_S} s", "MINI_CLAUDE_API_TIMEOUT"),
    ),
    "message_delta_without_message_stop": Fault(
        "the reply counts as complete, no error",
        lambda: [text_reply("complete enough", omit_message_stop=True)],
        "done",
        final_text="complete enough",
    ),
    "unknown_event_type": Fault(
        "ignored, the reply is complete, no error",
        lambda: [text_reply("still fine", unknown_event_after=2)],
        "done",
        final_text="still fine",
    ),
    "json_body_instead_of_stream": Fault(
        "a 200 JSON message for a streamed request: one line naming application/json, no empty reply",
        lambda: [
            Reply(body_instead_of_stream=json.dumps(message_object(text_reply("hi"), "m", "msg_1")).encode())
        ],
        "error",
        ("application/json", "not an event stream", "ANTHROPIC_BASE_URL"),
        after=nothing_was_shown,
    ),
    "proxy_html_page_instead_of_stream": Fault(
        "a proxy's HTML page with status 200: one line quoting its start",
        lambda: [Reply(body_instead_of_stream=b"<html>Login required</html>", body_content_type="text/html")],
        "error",
        ("text/html", "Login required", "not an event stream"),
        after=nothing_was_shown,
    ),
    "event_stream_without_events": Fault(
        "an event stream that ends at once: one line (no message_start), not a silent empty reply",
        lambda: [Reply(body_instead_of_stream=b": keep-alive\n\n", body_content_type="text/event-stream")],
        "error",
        ("ended without a reply", "message_start"),
        after=nothing_was_shown,
    ),
    "max_tokens_with_partial_tool_json": Fault(
        "the cut tool call is not run; the model is told (max_tokens) and goes on",
        lambda: [
            tool_reply(
                "write_file",
                {"file_path": "x.txt", "content": "x"},
                stop_reason="max_tokens",
                partial_tool_json='{"file_path": "x.txt", "content": "xxxxxxxx',
            ),
            text_reply("I will write it in parts."),
        ],
        "done",
        requests=2,
        final_text="I will write it in parts.",
        after=model_told_about_max_tokens,
    ),
}


@pytest.fixture
def harness(api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Harness:
    monkeypatch.setenv("MINI_CLAUDE_API_TIMEOUT", str(API_TIMEOUT_S))
    return Harness().start(permission_mode="bypass")  # a tool call that slipped through would run


# Every fault is followed by a normal turn whose request the fake validates (assert_next_turn_works).
@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=case("server", fault.expected), id=name) for name, fault in FAULTS.items()],
)
def test_model_server_fault(harness: Harness, api_env: FakeAnthropic, project_dir: Path, name: str) -> None:
    fault = FAULTS[name]
    api_env.stream_replies.extend(fault.replies())

    ended = harness.turn("write x.txt please")

    assert ended.reason == fault.reason, harness.events
    errors = [n.text for n in harness.of_type(Notice) if n.level == "error"]
    if fault.error:
        [line] = errors
        assert "\n" not in line
        for word in fault.error:
            assert word in line, line
    else:
        assert errors == []
    if fault.final_text is not None:
        assert ended.final_text == fault.final_text
    assert len(main_calls(api_env)) == fault.requests
    assert not (project_dir / "x.txt").exists()
    assert harness.of_type(ToolStarted) == []  # no tool call of a broken or cut reply ever starts
    api_env.stream_replies.clear()  # what a fault scripted beyond the calls it ended
    assert_next_turn_works(harness, api_env)
    if fault.after is not None:
        fault.after(harness, api_env)


@case(
    "server",
    "recall's side query fails (500, retried twice): reply unaffected, recall skipped, the log names the error",
)
def test_side_query_fault(harness: Harness, api_env: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    harness.session.store.save(name="deploys", description="how we deploy", memory_type="project", body="x\n")
    api_env.plain_replies.extend(error_reply(500, retry_after=0.01) for _ in range(3))
    api_env.stream_replies.append(text_reply("Thursdays."))

    with caplog.at_level(logging.INFO, logger="mini_claude"):
        ended = harness.turn("how do we deploy the service?")
        assert wait_for_recalls()

    assert ended.reason == "done" and ended.final_text == "Thursdays."
    assert len(side_queries(api_env)) == 3  # the same retries as a conversation call, told only to the log
    assert harness.of_type(Retrying) == []
    [skipped] = [r.getMessage() for r in caplog.records if "recall skipped" in r.getMessage()]
    assert skipped.startswith("memory recall skipped: ModelError: API error 500"), skipped
    assert skipped.endswith("(gave up after 2 retries)"), skipped
    api_env.plain_replies.append(choose())
    assert_next_turn_works(harness, api_env)
