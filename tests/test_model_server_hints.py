"""When the model server is not what it should be, the user is told what to fix: a base URL that
ends in /v1 or has no http://, a model name the server does not know, an answer that is no
stream; and while a call is retried, what it is waiting for. A blank base URL is the real API."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest

from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, Reply, error_reply, message_object, text_reply


@pytest.mark.parametrize("suffix", ["/v1", "/v1/", "/v1/messages"])
def test_a_base_url_ending_in_v1_is_named_with_the_fix(cli: Cli, api_env: FakeAnthropic, suffix: str) -> None:
    cli.env["ANTHROPIC_BASE_URL"] = api_env.base_url + suffix

    result = cli.run("-p", "hello")

    assert result.returncode == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert "API error 404" in line and "the SDK adds /v1/messages itself" in line
    assert line.endswith(f"set ANTHROPIC_BASE_URL={api_env.base_url}")
    assert api_env.requests[0].path == suffix.rstrip("/") + "/v1/messages"


@pytest.fixture
def proxy_requests() -> Iterator[tuple[str, list[bytes]]]:
    """An HTTPS proxy that writes down what each client asks it, then hangs up: where a program
    would connect, seen without any network."""
    server = socket.create_server(("127.0.0.1", 0))
    asked: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return  # closed: the test is over
            with client:
                client.settimeout(5)
                asked.append(client.recv(1024))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}", asked
    server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(); close() alone does not
    server.close()
    thread.join(5)
    assert not thread.is_alive()


@pytest.mark.parametrize("blank", ["", "  "], ids=["empty", "spaces"])
def test_a_blank_base_url_is_the_real_api(
    cli: Cli, proxy_requests: tuple[str, list[bytes]], blank: str
) -> None:
    """`export ANTHROPIC_BASE_URL=` is how people unset it; the SDK reading the blank itself
    failed with UnsupportedProtocol, blamed on api.anthropic.com."""
    proxy, asked = proxy_requests
    cli.env.update(ANTHROPIC_BASE_URL=blank, HTTPS_PROXY=proxy, MINI_CLAUDE_MAX_RETRIES="0")

    result = cli.run("-p", "hello")

    assert [request.split(b"\r\n")[0] for request in asked] == [b"CONNECT api.anthropic.com:443 HTTP/1.1"]
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("Could not reach the model server at api.anthropic.com: ")
    assert "UnsupportedProtocol" not in line


@pytest.mark.parametrize(
    ("base_url", "shown"),
    [
        ("localhost:8080", "add it (ANTHROPIC_BASE_URL=http://localhost:8080)"),
        ("127.0.0.1:8080/", "add it (ANTHROPIC_BASE_URL=http://127.0.0.1:8080/)"),
        ("//example.com", "add it (ANTHROPIC_BASE_URL=http://example.com)"),
        ("ftp://127.0.0.1:8080", "must start with http:// or https://"),
        ("http://", "names no host"),
        ("https:///v1", "names no host"),
    ],
)
def test_a_base_url_without_http_is_one_line_at_start(
    cli: Cli, api_env: FakeAnthropic, base_url: str, shown: str
) -> None:
    cli.env["ANTHROPIC_BASE_URL"] = base_url

    printed = cli.run("-p", "hello")
    with cli.terminal() as term:  # the REPL does not start either, rather than fail at the first message
        term.expect(r"mini-claude: error: [^\n]*\n")
        status = term.wait_exit()

    assert printed.returncode == 2 == status and printed.stdout == ""
    [line] = printed.stderr.splitlines()  # no usage text around it
    assert line.startswith(f"mini-claude: error: ANTHROPIC_BASE_URL={base_url!r} ") and shown in line
    assert api_env.requests == []


def test_an_unknown_model_is_named_as_such(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(error_reply(404, message="model: claude-sonet-5-5"))

    result = cli.run("--model", "claude-sonet-5-5", "-p", "hello")

    assert result.returncode == 1
    assert "The model 'claude-sonet-5-5' is not known to this server" in result.stderr
    assert "--model" in result.stderr and "ANTHROPIC_BASE_URL" not in result.stderr


def test_a_404_elsewhere_says_nothing_answers_there(cli: Cli, api_env: FakeAnthropic) -> None:
    cli.env["ANTHROPIC_BASE_URL"] = api_env.base_url + "/proxy"
    result = cli.run("-p", "hello")
    assert result.returncode == 1
    assert "Nothing answers there: check ANTHROPIC_BASE_URL" in result.stderr
    assert "/proxy/v1/messages" in result.stderr


@pytest.mark.parametrize(
    ("body", "content_type", "shown"),
    [
        (
            json.dumps(message_object(text_reply("hi"), "m", "msg_1")).encode(),
            "application/json",
            "application/json",
        ),
        (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html; charset=utf-8", "text/html"),
        (b"\x00\xff\xfe garbage", "application/octet-stream", "application/octet-stream"),
        (b"", "text/event-stream", "no message_start"),
        (b"<html>no type named</html>", "", "no message_start"),
        (b"data: not json at all\n\n", "text/event-stream", "no message_start"),
    ],
)
def test_an_answer_that_is_no_stream_is_an_error_not_an_empty_reply(
    cli: Cli, api_env: FakeAnthropic, body: bytes, content_type: str, shown: str
) -> None:
    api_env.stream_replies.append(Reply(body_instead_of_stream=body, body_content_type=content_type))

    result = cli.run("-p", "hello")

    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr  # once in a few full runs a second line showed: which one
    assert shown in lines[0]
    assert "\x00" not in result.stderr and "\x1b" not in result.stderr


def test_print_mode_says_on_stderr_while_a_call_is_retried(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([error_reply(529, retry_after=0.2), text_reply("Finally.")])

    text = cli.run("-p", "hello")
    api_env.stream_replies.extend([error_reply(529, retry_after=0.2), text_reply("Finally.")])
    streamed = cli.run("--output-format", "stream-json", "-p", "hello")

    assert text.returncode == 0 and text.stdout == "Finally.\n"
    assert "API error 529 (overloaded): retrying in 0.2 s (retry 1 of 2)…\n" in text.stderr
    [retry] = [e for e in map(json.loads, streamed.stdout.splitlines()) if e.get("subtype") == "api_retry"]
    assert {key: value for key, value in retry.items() if key not in ("session_id", "uuid")} == {
        "type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 2,
        "retry_delay_ms": 200, "error": "API error 529 (overloaded)",
    }  # fmt: skip


def test_no_retry_line_when_retries_are_off(cli: Cli, api_env: FakeAnthropic) -> None:
    cli.env["MINI_CLAUDE_MAX_RETRIES"] = "0"
    api_env.stream_replies.append(error_reply(529, retry_after=0.2))
    result = cli.run("-p", "hello")
    assert result.returncode == 1 and "retrying" not in result.stderr
    assert "API error 529" in result.stderr


def test_the_repl_spinner_says_it_is_retrying(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([error_reply(529, retry_after=1.5), text_reply("Back again.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("hello")
        term.expect(r"API error 529 \(overloaded\): retrying in 1\.5 s \(retry 1 of 2\)…")
        term.expect("Back again.")
        term.expect_prompt()


def test_the_plain_repl_prints_the_retry_as_a_line(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([error_reply(503, retry_after=0.3), text_reply("Back again.")])
    with cli.terminal("--plain") as term:
        term.wait_until_ready()
        term.submit("hello")
        shown = term.expect("Back again.")
        term.expect_prompt()
    assert "API error 503 (unavailable): retrying in 0.3 s (retry 1 of 2)…" in shown
