"""The fake Messages API, driven through the real `anthropic` SDK, so agent tests can trust it."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from tests.fake_api import (
    NO_REPLY_MESSAGE,
    SHUTDOWN_JOIN_SECONDS,
    THREAD_NAME,
    FakeAnthropic,
    Reply,
    error_reply,
    multi_tool_reply,
    text_reply,
    tool_reply,
    validate_request,
)

MODEL = "claude-test"
HELLO = [{"role": "user", "content": "hi"}]
Connect = Callable[..., anthropic.Anthropic]  # the `connect` fixture: (max_retries=0, read_timeout=5.0)


def make_client(fake: FakeAnthropic, max_retries: int = 0, read_timeout: float = 5.0) -> anthropic.Anthropic:
    timeout = anthropic.Timeout(read_timeout, connect=1.0)
    return anthropic.Anthropic(base_url=fake.base_url, api_key="k", max_retries=max_retries, timeout=timeout)


@pytest.fixture
def connect(fake_api: FakeAnthropic) -> Iterator[Callable[..., anthropic.Anthropic]]:
    """Makes SDK clients for the fake server and closes them (and their pooled sockets) afterwards."""
    clients: list[anthropic.Anthropic] = []

    def connect(max_retries: int = 0, read_timeout: float = 5.0) -> anthropic.Anthropic:
        clients.append(make_client(fake_api, max_retries, read_timeout))
        return clients[-1]

    yield connect
    for client in clients:
        client.close()


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 10, "messages": messages, **extra}


def stream_final(client: anthropic.Anthropic, messages: list[dict] = HELLO, **kw: Any) -> tuple[list, Any]:
    """Stream one request; returns the SDK's events and its final message."""
    with client.messages.stream(**body(messages, **kw)) as stream:
        events = list(stream)
        return events, stream.get_final_message()


SseEvents = list[tuple[str, dict[str, Any]]]


def raw_sse(fake: FakeAnthropic, request: dict[str, Any]) -> tuple[http.client.HTTPResponse, SseEvents]:
    """POST without the SDK and split the SSE body into (event name, data) pairs."""
    conn = http.client.HTTPConnection("127.0.0.1", int(fake.base_url.rsplit(":", 1)[1]), timeout=5)
    conn.request("POST", "/v1/messages", json.dumps(request), {"content-type": "application/json"})
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    events = []
    for chunk in text.strip().split("\n\n"):
        name_line, data_line = chunk.split("\n")
        events.append((name_line.removeprefix("event: "), json.loads(data_line.removeprefix("data: "))))
    return response, events


# ---------------------------------------------------------------- happy paths


def test_streamed_text_arrives_in_chunks_and_as_the_final_message(
    fake_api: FakeAnthropic, connect: Connect
) -> None:
    fake_api.stream_replies.append(text_reply("Hello there", chunk_size=4))
    events, final = stream_final(connect())
    assert [e.text for e in events if e.type == "text"] == ["Hell", "o th", "ere"]
    assert [block.to_dict() for block in final.content] == [{"type": "text", "text": "Hello there"}]
    assert (final.stop_reason, final.model) == ("end_turn", MODEL)


def test_streamed_tool_use_input_reassembles(fake_api: FakeAnthropic, connect: Connect) -> None:
    tool_input = {"path": "src/a.py", "lines": [1, 2], "opts": {"deep": True, "q": 'say "hi"'}}
    fake_api.stream_replies.append(tool_reply("read", tool_input, text="Look.", id="toolu_1", chunk_size=5))
    _, final = stream_final(connect())
    assert final.stop_reason == "tool_use"
    assert final.content[0].text == "Look."
    tool_use = final.content[1]
    assert (tool_use.type, tool_use.id, tool_use.name) == ("tool_use", "toolu_1", "read")
    assert tool_use.input == tool_input


def test_multi_tool_reply_streams_every_call(fake_api: FakeAnthropic, connect: Connect) -> None:
    fake_api.stream_replies.append(multi_tool_reply([("a", {"x": 1}), ("b", {})]))
    _, final = stream_final(connect())
    assert [(b.name, b.input) for b in final.content] == [("a", {"x": 1}), ("b", {})]
    assert final.content[0].id != final.content[1].id


def test_sse_wire_format_matches_the_real_api(fake_api: FakeAnthropic) -> None:
    fake_api.stream_replies.append(tool_reply("t", {"k": "v"}, text="ok"))
    response, events = raw_sse(fake_api, body(HELLO, stream=True))
    assert response.getheader("content-type") == "text/event-stream"
    assert response.getheader("request-id", "").startswith("req_")
    names = [name for name, _ in events]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert all(data["type"] == name for name, data in events)
    assert set(events[0][1]["message"]["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    }
    tool_deltas = [d["delta"] for n, d in events if n == "content_block_delta" and d["index"] == 1]
    assert tool_deltas[0] == {"type": "input_json_delta", "partial_json": ""}
    assert events[-2][1]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}


def test_plain_create_returns_the_scripted_message(fake_api: FakeAnthropic, connect: Connect) -> None:
    fake_api.plain_replies.append(text_reply('{"selected_memories": []}'))
    message = connect().messages.create(**body(HELLO))
    assert message.content[0].text == '{"selected_memories": []}'
    assert message.stop_reason == "end_turn"
    assert fake_api.requests[0].stream is False


def test_usage_is_reported_streamed_and_plain(fake_api: FakeAnthropic, connect: Connect) -> None:
    usage = {"input_tokens": 100, "output_tokens": 42, "cache_read_input_tokens": 80}
    fake_api.stream_replies.append(text_reply("a", usage=usage))
    fake_api.plain_replies.append(text_reply("b", usage=usage))
    client = connect()
    for reported in (stream_final(client)[1].usage, client.messages.create(**body(HELLO)).usage):
        assert (reported.input_tokens, reported.output_tokens) == (100, 42)
        assert (reported.cache_read_input_tokens, reported.cache_creation_input_tokens) == (80, 0)


def test_requests_are_recorded_with_headers_and_body(fake_api: FakeAnthropic, connect: Connect) -> None:
    fake_api.stream_replies.append(text_reply("ok"))
    tools = [{"name": "grep", "description": "search", "input_schema": {"type": "object", "properties": {}}}]
    stream_final(connect(), system="be brief", tools=tools)
    [request] = fake_api.wait_for_requests(1)
    assert (request.method, request.path, request.stream) == ("POST", "/v1/messages", True)
    assert request.headers["authorization"] == "Bearer k"  # SDK 2.x sends the key this way, not x-api-key
    assert request.api_key == "k"
    assert (request.model, request.system, request.tools) == (MODEL, "be brief", tools)
    assert request.messages == HELLO
    assert request.body["max_tokens"] == 10
    assert request.validation_error is None and not request.unscripted


def test_wait_for_requests_times_out_with_a_clear_error(fake_api: FakeAnthropic) -> None:
    with pytest.raises(TimeoutError, match="expected 1 requests"):
        fake_api.wait_for_requests(1, timeout=0.05)


def test_responder_routes_by_content_and_falls_through_on_none(
    fake_api: FakeAnthropic, connect: Connect
) -> None:
    def route(request: Any) -> Reply | None:
        return text_reply("memory answer") if request.system == "pick memories" else None

    fake_api.responder = route
    fake_api.plain_replies.append(text_reply("queued answer"))
    client = connect()
    routed = client.messages.create(**body(HELLO, system="pick memories"))
    queued = client.messages.create(**body(HELLO))
    assert (routed.content[0].text, queued.content[0].text) == ("memory answer", "queued answer")


def test_delay_holds_back_the_response(fake_api: FakeAnthropic, connect: Connect) -> None:
    fake_api.plain_replies.append(text_reply("slow", delay=0.3))
    started = time.monotonic()
    connect().messages.create(**body(HELLO))
    assert time.monotonic() - started >= 0.3


# ---------------------------------------------------------------- HTTP errors and retries


def test_rate_limit_with_retry_after_is_retried(fake_api: FakeAnthropic, connect: Connect) -> None:
    fake_api.stream_replies.extend([error_reply(429, retry_after=0.01), text_reply("after the wait")])
    _, final = stream_final(connect(max_retries=2))
    assert final.content[0].text == "after the wait"
    assert len(fake_api.requests) == 2


def test_overloaded_exhausts_the_sdk_retries(fake_api: FakeAnthropic, connect: Connect) -> None:
    fake_api.stream_replies.extend(error_reply(529, retry_after=0.01) for _ in range(3))
    with pytest.raises(anthropic.OverloadedError) as caught:
        stream_final(connect(max_retries=2))
    assert caught.value.body["error"]["type"] == "overloaded_error"
    assert caught.value.response.headers["request-id"] == caught.value.body["request_id"]
    assert len(fake_api.requests) == 3


@pytest.mark.parametrize(
    ("status", "error_class"), [(400, anthropic.BadRequestError), (401, anthropic.AuthenticationError)]
)
def test_client_errors_are_not_retried(
    fake_api: FakeAnthropic, status: int, error_class: type, connect: Connect
) -> None:
    fake_api.stream_replies.append(error_reply(status, message="nope"))
    with pytest.raises(error_class, match="nope"):
        stream_final(connect(max_retries=2))
    assert len(fake_api.requests) == 1


def test_missing_scripted_reply_is_a_500_that_is_not_retried(
    fake_api: FakeAnthropic, connect: Connect
) -> None:
    with pytest.raises(anthropic.InternalServerError, match=NO_REPLY_MESSAGE):
        connect(max_retries=2).messages.create(**body(HELLO))
    [request] = fake_api.requests
    assert request.unscripted


# ---------------------------------------------------------------- stream faults


def test_error_event_mid_stream_raises_a_status_error(fake_api: FakeAnthropic, connect: Connect) -> None:
    fake_api.stream_replies.append(text_reply("Hello there", chunk_size=2, error_event_after=4))
    texts = []
    stream = connect().messages.stream(**body(HELLO))
    with pytest.raises(anthropic.APIStatusError, match="overloaded_error"), stream as events:
        texts.extend(e.text for e in events if e.type == "text")
    assert texts == ["He"]  # message_start, block start, ping, one delta, then the error


def test_connection_dropped_inside_an_event_raises_a_protocol_error(
    fake_api: FakeAnthropic, connect: Connect
) -> None:
    # The SDK does not wrap errors raised while a stream is being read: callers see httpx2's own.
    fake_api.stream_replies.append(text_reply("Hello there", chunk_size=2, drop_after=4))
    with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
        stream_final(connect(max_retries=2))
    assert len(fake_api.requests) == 1


def test_stalled_stream_is_ended_by_the_client_read_timeout(
    fake_api: FakeAnthropic, connect: Connect
) -> None:
    fake_api.stream_replies.append(text_reply("Hello", stall_after=3))
    started = time.monotonic()
    with pytest.raises(httpx2.ReadTimeout):
        stream_final(connect(read_timeout=0.5))
    assert time.monotonic() - started < 2.0


def test_stall_resumes_after_stall_seconds(fake_api: FakeAnthropic, connect: Connect) -> None:
    fake_api.stream_replies.append(text_reply("Hello", stall_after=3, stall_seconds=0.1))
    assert stream_final(connect())[1].content[0].text == "Hello"


def test_a_held_stream_waits_after_its_deltas_until_released(
    fake_api: FakeAnthropic, connect: Connect
) -> None:
    reply = text_reply("one two three", chunk_size=4, hold_after_deltas=2)
    fake_api.stream_replies.append(reply)
    with connect().messages.stream(**body(HELLO)) as stream:
        texts = (event.delta.text for event in stream if event.type == "content_block_delta")
        assert [next(texts), next(texts)] == ["one ", "two "]
        assert reply.holding.wait(5)
        assert not reply.release.is_set()  # nothing more comes until the test says so
        reply.release.set()
        assert "".join(texts) == "three"
        assert stream.get_final_message().content[0].text == "one two three"


def test_a_held_reply_is_answered_once_released(fake_api: FakeAnthropic, connect: Connect) -> None:
    reply = text_reply("at last", held=True)
    fake_api.plain_replies.append(reply)
    answers: list[str] = []
    asking = threading.Thread(target=lambda: answers.append(connect().messages.create(**body(HELLO))))
    asking.start()
    assert reply.holding.wait(5)
    asking.join(0.2)
    assert asking.is_alive() and not answers  # no answer until the test says so
    reply.release.set()
    asking.join(5)
    assert [answer.content[0].text for answer in answers] == ["at last"]


def test_closing_the_fake_ends_a_held_stream_at_once() -> None:
    fake = FakeAnthropic()
    reply = text_reply("never finished", hold_after_deltas=1)
    fake.stream_replies.append(reply)
    client = make_client(fake)
    failed: list[BaseException] = []

    def read() -> None:
        try:
            stream_final(client)
        except (anthropic.APIError, httpx2.HTTPError) as error:
            failed.append(error)

    reader = threading.Thread(target=read)
    reader.start()
    assert reply.holding.wait(5)
    started = time.monotonic()
    fake.close()
    reader.join(5)
    client.close()
    assert not reader.is_alive() and failed  # the stream was cut, not finished
    assert time.monotonic() - started < SHUTDOWN_JOIN_SECONDS


def test_unknown_event_type_does_not_break_the_stream(fake_api: FakeAnthropic, connect: Connect) -> None:
    fake_api.stream_replies.append(text_reply("Hello there", unknown_event_after=2))
    assert stream_final(connect())[1].content[0].text == "Hello there"


def test_stream_without_message_stop_still_yields_a_message(
    fake_api: FakeAnthropic, connect: Connect
) -> None:
    fake_api.stream_replies.append(text_reply("cut", omit_message_stop=True))
    events, final = stream_final(connect())
    assert events[-1].type == "message_delta"
    assert final.content[0].text == "cut"


def test_partial_tool_json_is_streamed_raw(fake_api: FakeAnthropic) -> None:
    cut_json = '{"path": "a.txt", "body": "unfini'
    reply = tool_reply("write", {}, partial_tool_json=cut_json, stop_reason="max_tokens")
    fake_api.stream_replies.append(reply)
    _, events = raw_sse(fake_api, body(HELLO, stream=True))
    streamed = "".join(d["delta"]["partial_json"] for n, d in events if n == "content_block_delta")
    assert streamed == cut_json
    assert events[-2][1]["delta"]["stop_reason"] == "max_tokens"


def test_delta_delay_spaces_out_the_deltas(fake_api: FakeAnthropic, connect: Connect) -> None:
    fake_api.stream_replies.append(text_reply("abcd", chunk_size=1, delta_delay=0.05))
    started = time.monotonic()
    stream_final(connect())
    assert time.monotonic() - started >= 0.2


# ---------------------------------------------------------------- shutdown


def test_close_returns_at_once_with_stalled_and_delayed_handlers() -> None:
    fake = FakeAnthropic()
    fake.stream_replies.append(text_reply("Hello", stall_after=2, stall_seconds=60))
    fake.plain_replies.append(text_reply("late", delay=60))
    client = make_client(fake, read_timeout=60)
    failures: list[Exception] = []

    def call(request: Any) -> None:
        try:
            request()
        except Exception as err:  # close() cuts the connection under the client
            failures.append(err)

    callers = [
        threading.Thread(target=call, args=(lambda: stream_final(client),)),
        threading.Thread(target=call, args=(lambda: client.messages.create(**body(HELLO)),)),
    ]
    for caller in callers:
        caller.start()
    fake.wait_for_requests(2)
    time.sleep(0.1)  # let both handlers reach their wait
    started = time.monotonic()
    fake.close()
    assert time.monotonic() - started < 1.0
    for caller in callers:
        caller.join(5)
    client.close()
    assert len(failures) == 2
    assert [t.name for t in threading.enumerate() if t.name.startswith(THREAD_NAME)] == []
    assert fake._server.socket.fileno() == -1


# ---------------------------------------------------------------- validation


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def without(key: str) -> dict[str, Any]:
    return {k: v for k, v in body(HELLO).items() if k != key}


TOOL = {"name": "grep", "description": "search files", "input_schema": {"type": "object"}}
USE_1 = {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {}}
USE_2 = {"type": "tool_use", "id": "toolu_2", "name": "grep", "input": {}}
RESULT_1 = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
RESULT_2 = {"type": "tool_result", "tool_use_id": "toolu_2", "content": "ok"}
TEXT = {"type": "text", "text": "note"}
CACHED = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
NESTED_TOOL_USE = {**RESULT_1, "content": [USE_2]}
TOOL_TURN = [*HELLO, assistant(TEXT, USE_1, USE_2), user(RESULT_2, RESULT_1)]

GOOD_BODIES = {
    "plain": body(HELLO),
    "tool round trip": body([*TOOL_TURN, assistant(TEXT)], tools=[TOOL]),
    "result then text": body([*HELLO, assistant(USE_1), user({**RESULT_1, "content": [TEXT]}, TEXT)]),
    "error result without content": body([*HELLO, assistant(USE_1), user({**RESULT_1, "is_error": True})]),
    "cached system blocks": body(HELLO, system=[CACHED, TEXT]),
    "four cache breakpoints": body([user(CACHED, CACHED, CACHED)], system=[CACHED]),
}


@pytest.mark.parametrize("good", GOOD_BODIES.values(), ids=GOOD_BODIES.keys())
def test_validate_request_accepts_well_formed_conversations(good: dict[str, Any]) -> None:
    assert validate_request(good) is None


BAD_BODIES = {
    "no model": (without("model"), "model"),
    "no max_tokens": (without("max_tokens"), "max_tokens"),
    "no messages": (body([]), "at least one message"),
    "assistant first": (body([{"role": "assistant", "content": "hi"}]), "alternate"),
    "two user turns": (body([*HELLO, *HELLO]), "alternate"),
    "empty string content": (body([{"role": "user", "content": ""}]), "non-empty content"),
    "empty block list": (body([user()]), "non-empty content"),
    "empty text block": (body([user({"type": "text", "text": ""})]), "non-whitespace"),
    "tool_use without result": (body([*HELLO, assistant(USE_1), user(TEXT)]), "without `tool_result`"),
    "trailing tool_use": (body([*HELLO, assistant(USE_1)]), "without `tool_result`"),
    "one of two results missing": (body([*HELLO, assistant(USE_1, USE_2), user(RESULT_1)]), "toolu_2"),
    "result not first": (body([*HELLO, assistant(USE_1), user(TEXT, RESULT_1)]), "must come first"),
    "result for unknown id": (body([*HELLO, assistant(USE_1), user(RESULT_1, RESULT_2)]), "unexpected"),
    "duplicate result": (body([*HELLO, assistant(USE_1), user(RESULT_1, RESULT_1)]), "duplicate"),
    "result in first message": (body([user(RESULT_1)]), "unexpected"),
    "reused tool_use id": (body([*TOOL_TURN, assistant(USE_1), user(RESULT_1)]), "unique"),
    "one id twice in a message": (body([*HELLO, assistant(USE_1, USE_1), user(RESULT_1)]), "unique"),
    "tool_use id with a dot": (
        body([*HELLO, assistant({**USE_1, "id": "call.1"}), user({**RESULT_1, "tool_use_id": "call.1"})]),
        "should match pattern",
    ),
    "result content not text": (body([*HELLO, assistant(USE_1), user(NESTED_TOOL_USE)]), "text"),
    "system not text blocks": (body(HELLO, system=[{"type": "image"}]), "system.0"),
    "tool without schema": (body(HELLO, tools=[{"name": "grep", "description": "d"}]), "input_schema"),
    "tool without description": (body(HELLO, tools=[{**TOOL, "description": ""}]), "description"),
    "five cache breakpoints": (body([user(CACHED, CACHED, CACHED, CACHED, CACHED)]), "maximum of 4"),
}


@pytest.mark.parametrize(("bad", "reason"), BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_validate_request_rejects_what_the_real_api_rejects(bad: dict[str, Any], reason: str) -> None:
    error = validate_request(bad)
    assert error is not None and reason in error


def test_invalid_conversation_gets_a_400_through_the_sdk(fake_api: FakeAnthropic, connect: Connect) -> None:
    fake_api.stream_replies.append(text_reply("kept for later"))
    with pytest.raises(anthropic.BadRequestError, match="without `tool_result`"):
        stream_final(connect(max_retries=2), [*HELLO, assistant(USE_1), user(TEXT)])
    [request] = fake_api.requests
    assert "toolu_1" in (request.validation_error or "")
    assert len(fake_api.stream_replies) == 1  # an invalid request consumes no scripted reply


def test_a_body_holding_nan_is_refused_like_the_real_api(fake_api: FakeAnthropic) -> None:
    fake_api.stream_replies.append(text_reply("kept for later"))
    conn = http.client.HTTPConnection("127.0.0.1", int(fake_api.base_url.rsplit(":", 1)[1]), timeout=5)
    # json.dumps writes NaN by default: exactly what a careless client would send.
    conn.request("POST", "/v1/messages", json.dumps(body(HELLO, temperature=float("nan"))))
    response = conn.getresponse()
    response.read()
    conn.close()
    assert response.status == 400
    assert fake_api.requests[-1].validation_error == "request body must be a JSON object"
    assert len(fake_api.stream_replies) == 1
