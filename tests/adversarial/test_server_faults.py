"""Every fault the fake model server can produce, each followed by a normal turn whose request the
fake validates: the fault ends in one clear line (or a silent retry), runs no half-received tool
call, and leaves a conversation the API accepts. No wait outlasts its timeout (short ones here:
the outcome and the message are asserted, never a duration). (tests/test_agent_faults.py has the
Ctrl+C cases.)"""

from __future__ import annotations

import email.utils
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mini_claude.core.events import Notice, Retrying, ToolStarted
from mini_claude.llm.model_errors import ModelError
from tests.adversarial.cases import case
from tests.agent_harness import Harness, assert_next_turn_works, wait_for_recalls
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, Reply, error_reply, message_object, text_reply, tool_reply
from tests.kit import choose, main_calls, result_text, side_queries

API_TIMEOUT_S = 1
SIDE_QUERY_TIMEOUT_S = 1.5  # room for a short retry on a busy machine
DRIP_S = 0.05  # between bytes: an event of a few hundred bytes takes far longer than the timeouts


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


def refused_reply_not_sent_back(harness: Harness, fake: FakeAnthropic) -> None:
    nothing_was_shown(harness, fake)  # the API asks that a refused reply be taken out, not sent again
    assert harness.session.agent.messages[0]["role"] == "user" and len(harness.session.agent.messages) == 2


def paused_reply_sent_back_as_it_was(harness: Harness, fake: FakeAnthropic) -> None:
    continued = main_calls(fake)[1]
    assert [message["role"] for message in continued.messages] == ["user", "assistant"]
    assert [block["text"] for block in continued.messages[-1]["content"]] == ["Looking."]
    assistant = main_calls(fake)[-1].messages[1]  # the paused reply and its continuation: one message
    assert [block["text"] for block in assistant["content"]] == ["Looking.", " Found it."]


def call_answered_as_not_run(harness: Harness, fake: FakeAnthropic) -> None:
    [result] = tool_results_in_messages(main_calls(fake)[-1].messages[2])
    assert result["is_error"] is True and "stop reason that is not tool_use" in result_text(result)


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
    "retry_after_an_hour": Fault(
        "429 asking retry-after: 3600: not waited out; one line saying when the server asked to retry",
        lambda: [error_reply(429, retry_after=3600), text_reply("never asked for")],
        "error",
        ("API error 429", "rate_limit_error", "asked to retry in 3600 s, at ", "waits 60 s at most"),
    ),
    "retry_after_ms_an_hour": Fault(
        "the same asked as retry-after-ms: 3600000: not waited out, the line says so",
        lambda: [error_reply(529, headers={"retry-after-ms": "3600000"}), text_reply("never asked for")],
        "error",
        ("API error 529", "asked to retry in 3600 s"),
    ),
    "retry_after_an_http_date": Fault(
        "the same asked as an HTTP date two hours ahead: not waited out, the line says so",
        lambda: [
            error_reply(
                503, headers={"retry-after": email.utils.formatdate(time.time() + 7200, usegmt=True)}
            ),
            text_reply("never asked for"),
        ],
        "error",
        ("API error 503", "asked to retry in 7"),
    ),
    "pings_forever_before_any_text": Fault(
        f"keep-alive pings but no content for MINI_CLAUDE_API_TIMEOUT={API_TIMEOUT_S} s: ends, one line",
        lambda: [text_reply("never shown", stall_after=1, ping_every=0.1, stall_seconds=60)],
        "error",
        (f"went silent for {API_TIMEOUT_S} s", "MINI_CLAUDE_API_TIMEOUT"),
        after=nothing_was_shown,
    ),
    "pings_forever_within_text": Fault(
        "pings forever after some text: ends, one line; the text shown so far is kept",
        lambda: [
            text_reply(
                "The first part of a long answer",
                chunk_size=4,
                stall_after=5,
                ping_every=0.1,
                stall_seconds=60,
            )
        ],
        "error",
        (f"went silent for {API_TIMEOUT_S} s",),
        after=shown_text_is_kept,
    ),
    "stream_dripping_a_byte_at_a_time": Fault(
        "bytes keep coming but no whole event for the API timeout: ends, one line",
        lambda: [text_reply("slow", drip_seconds=DRIP_S)],
        "error",
        (f"went silent for {API_TIMEOUT_S} s", "MINI_CLAUDE_API_TIMEOUT"),
        after=nothing_was_shown,
    ),
    "refusal_with_a_tool_call": Fault(
        "stop reason refusal: reported as refused, its write_file never runs, the reply is not sent back",
        lambda: [write_call(text="Writing it now.", stop_reason="refusal")],
        "refused",
        ("declined", "refusal"),
        after=refused_reply_not_sent_back,
    ),
    "refusal_of_text": Fault(
        "stop reason refusal mid-text: reported as refused, not as success",
        lambda: [text_reply("Here is how to", stop_reason="refusal")],
        "refused",
        ("declined", "refusal"),
        after=refused_reply_not_sent_back,
    ),
    "pause_turn_continues": Fault(
        "stop reason pause_turn: the reply is sent back as it was and the turn goes on to the end",
        lambda: [text_reply("Looking.", stop_reason="pause_turn"), text_reply(" Found it.")],
        "done",
        requests=2,
        final_text="Looking. Found it.",
        after=paused_reply_sent_back_as_it_was,
    ),
    "unknown_stop_reason_with_a_tool_call": Fault(
        "a stop reason nobody documented: one line naming it; its write_file never runs",
        lambda: [write_call(stop_reason="tool_use_v2")],
        "error",
        ("'tool_use_v2'", "stop reason"),
        after=call_answered_as_not_run,
    ),
    "context_window_exceeded": Fault(
        "stop reason model_context_window_exceeded: the reply counts as cut off (a warning), not done",
        lambda: [text_reply("A long", stop_reason="model_context_window_exceeded")],
        "max_tokens",
        final_text="A long",
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
    "recall's side query fails (500, retried twice): reply unaffected, recall skipped, the log says why",
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


SIDE_QUERY_FAULTS = {
    "a body dripped a byte at a time": ([choose(drip_seconds=DRIP_S)], 1),
    "headers long after the timeout": ([choose(delay=60)], 1),
    "a retry, then a dripped body": ([error_reply(529, retry_after=0.1), choose(drip_seconds=DRIP_S)], 2),
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=case("server", f"side query: {name}: ends at its timeout, a total"), id=name)
        for name in SIDE_QUERY_FAULTS
    ],
)
def test_a_side_query_timeout_is_a_total(harness: Harness, api_env: FakeAnthropic, name: str) -> None:
    replies, requests = SIDE_QUERY_FAULTS[name]
    api_env.plain_replies.extend(replies)

    with pytest.raises(ModelError) as failed:
        harness.session.llm.side_query(system="s", user="u", max_tokens=10, timeout=SIDE_QUERY_TIMEOUT_S)

    assert str(failed.value) == (
        f"The model server did not answer within {SIDE_QUERY_TIMEOUT_S} s "
        "(raise MINI_CLAUDE_SIDE_QUERY_TIMEOUT if it is just slow)."
    )
    assert len(side_queries(api_env)) == requests


@case("server", "side query answered by a proxy's page (200, HTML): one line quoting it, not an empty answer")
def test_a_side_query_answered_by_something_else(harness: Harness, api_env: FakeAnthropic) -> None:
    page = b"<html><body>Login required</body></html>"
    api_env.plain_replies.append(Reply(body_instead_of_stream=page, body_content_type="text/html"))

    with pytest.raises(ModelError) as failed:
        harness.session.llm.side_query(system="s", user="u", max_tokens=10)

    assert "is not a message" in str(failed.value) and "Login required" in str(failed.value)
    assert "ANTHROPIC_BASE_URL" in str(failed.value)


@case("server", "side query: a retry-after longer than what is left of its timeout is not waited out")
def test_a_side_query_never_waits_past_its_timeout(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.plain_replies.extend([error_reply(529, retry_after=30), choose()])

    with pytest.raises(ModelError, match=r"^API error 529: overloaded_error"):
        harness.session.llm.side_query(system="s", user="u", max_tokens=10, timeout=SIDE_QUERY_TIMEOUT_S)

    assert len(side_queries(api_env)) == 1


@case(
    "server",
    "recall's side query dripping its answer: skipped at MINI_CLAUDE_SIDE_QUERY_TIMEOUT, reply unaffected",
)
def test_a_dripping_recall_is_skipped_at_its_timeout(
    api_env: FakeAnthropic,
    project_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("MINI_CLAUDE_SIDE_QUERY_TIMEOUT", str(SIDE_QUERY_TIMEOUT_S))
    harness = Harness().start()
    harness.session.store.save(name="deploys", description="how we deploy", memory_type="project", body="x\n")
    api_env.plain_replies.append(choose("project_deploys.md", drip_seconds=DRIP_S))
    api_env.stream_replies.append(text_reply("Thursdays."))

    with caplog.at_level(logging.INFO, logger="mini_claude.recall"):
        ended = harness.turn("how do we deploy the service?")
        assert wait_for_recalls()

    assert ended.final_text == "Thursdays."
    [skipped] = [r.getMessage() for r in caplog.records if "recall skipped" in r.getMessage()]
    assert f"did not answer within {SIDE_QUERY_TIMEOUT_S} s" in skipped, skipped


@case("server", "Esc during a retry's 30 s wait: the turn stops at once, the retry is never made")
def test_esc_ends_a_retry_wait_at_once(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([error_reply(529, retry_after=30), text_reply("Back again.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("hello")
        term.expect(r"retrying in 30 s \(retry 1 of 2\)…")
        term.type("\x1b")
        term.expect("Interrupted.")  # within the terminal's expect timeout: far less than 30 s
        term.expect_prompt()
        term.submit("still there?")
        term.expect("Back again.")
        term.expect_prompt()
    assert len(main_calls(api_env)) == 2  # the one that failed, and the next message's
