"""A server that drips what comes before a reply's content: its headers a byte at a time, or an
error whose body never ends. Each byte arrives well within the read timeout, so only a deadline
over the whole wait ends it: the side-query timeout is a total, and a conversation call that has
had no content for MINI_CLAUDE_API_TIMEOUT ends, however busy the connection is kept.

The fake model server sends its headers at once; this one (a socket on 127.0.0.1) drips them, for
far longer than the timeouts, and the test checks it was still dripping when the call ended."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_claude.core.config import Settings
from mini_claude.llm.client import ModelClient
from mini_claude.llm.model_errors import ModelError
from tests.adversarial.cases import case
from tests.cli_harness import Cli

DRIP_SECONDS = 0.05
DRIP_BYTES = 1200  # a minute of dripping: far past every timeout below
TIMEOUT_S = 1
STARTS = {
    "headers": b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-padding: ",
    "error_body": (
        b"HTTP/1.1 529 Overloaded\r\ncontent-type: application/json\r\nx-should-retry: false\r\n"
        b"content-length: 100000\r\n\r\n"
    ),
}


class DrippingServer:
    """Answers every request with `start`, then a byte every DRIP_SECONDS until DRIP_BYTES are
    sent or the test ends; `finished` says whether a drip ran to its end."""

    def __init__(self, start: bytes) -> None:
        self.start = start
        self.finished = threading.Event()
        self.stopping = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._drip, args=(connection,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _drip(self, connection: socket.socket) -> None:
        with connection:
            received = b""
            while b"\r\n\r\n" not in received and (chunk := connection.recv(65536)):
                received += chunk
            try:
                connection.sendall(self.start)
                for _ in range(DRIP_BYTES):
                    if self.stopping.wait(DRIP_SECONDS):
                        return
                    connection.sendall(b" " if self.start.endswith(b"\r\n\r\n") else b"x")
            except OSError:
                return  # the client hung up: the call ended
            self.finished.set()

    def close(self) -> None:
        self.stopping.set()
        self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() waiting on it
        self.listener.close()
        for thread in self.threads:
            thread.join(5)


@pytest.fixture(params=list(STARTS))
def dripping(request: pytest.FixtureRequest) -> Iterator[DrippingServer]:
    server = DrippingServer(STARTS[request.param])
    yield server
    server.close()


def _client(server: DrippingServer) -> ModelClient:
    settings = Settings(base_url=server.url, api_key="test-key", max_retries=0)
    settings.api_timeout = settings.side_query_timeout = TIMEOUT_S
    return ModelClient(settings)


@case("server", "side query: headers dripped, or an error body that never ends: ends at its timeout, a total")
def test_a_side_query_ends_at_its_timeout(dripping: DrippingServer) -> None:
    with pytest.raises(ModelError, match=f"did not answer within {TIMEOUT_S} s"):
        _client(dripping).side_query(system="s", user="u", max_tokens=10)

    assert not dripping.finished.is_set()  # it was still dripping: the timeout ended the call


@case("server", "a conversation call whose headers, or error body, drip: ends at MINI_CLAUDE_API_TIMEOUT")
def test_a_conversation_call_ends_at_the_api_timeout(dripping: DrippingServer) -> None:
    from mini_claude.llm.streamed_response import StreamedResponse

    stream = _client(dripping).stream(
        model="m", system=[], messages=[{"role": "user", "content": "hi"}], tools=[], max_tokens=10,
        response=StreamedResponse(),
    )  # fmt: skip
    with pytest.raises(ModelError, match=f"went silent for {TIMEOUT_S} s"):
        list(stream)

    assert not dripping.finished.is_set()


@case("server", "print mode against a server dripping its headers: exits 1 at MINI_CLAUDE_API_TIMEOUT")
def test_print_mode_ends(project_dir: Path) -> None:
    server = DrippingServer(STARTS["headers"])
    try:
        cli = Cli(project_dir)
        cli.env.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="k", MINI_CLAUDE_API_TIMEOUT="1")
        cli.env["MINI_CLAUDE_MAX_RETRIES"] = "0"

        result = cli.run("-p", "hi", timeout=DRIP_SECONDS * DRIP_BYTES / 2)

        assert result.returncode == 1, result.stderr
        assert "went silent for 1 s" in result.stderr
        assert not server.finished.is_set()
    finally:
        server.close()
