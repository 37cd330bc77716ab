"""A local fake of the Anthropic Messages API for tests: a real HTTP server that the official SDK
can talk to through `base_url`, serving scripted replies (streamed or not), injecting faults,
recording every request and rejecting malformed conversations the way the real API does."""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import math
import selectors
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.fake_api_thinking import REQUEST_TYPES, issued_with_calls, written_after
from tests.fake_api_validation import validate_request

MESSAGES_PATH = "/v1/messages"
NO_REPLY_MESSAGE = "fake server: no scripted reply for this request"
DEFAULT_USAGE = {
    "input_tokens": 12,
    "output_tokens": 7,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
SHUTDOWN_JOIN_SECONDS = 2.0
HOLD_SECONDS = 60.0  # a held reply a test forgot to release goes on, and so does the test
THREAD_NAME = "fake-anthropic"
SseEvent = tuple[str, dict[str, Any]]


@dataclass
class Reply:
    """One scripted response: content blocks to stream or return, an HTTP error, or a faulty stream."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None  # None: "tool_use" if there is a tool_use block, else "end_turn"
    stop_sequence: str | None = None
    usage: dict[str, int] = field(default_factory=dict)  # merged over DEFAULT_USAGE
    delay: float = 0.0  # seconds before the status line
    chunk_size: int = 16  # characters per text_delta / input_json_delta
    delta_delay: float = 0.0  # seconds after each content_block_delta
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error_type: str | None = None
    error_message: str | None = None
    # Stream faults; N counts the scripted SSE events already sent (message_start is event 1).
    error_event_after: int | None = None
    drop_after: int | None = None
    stall_after: int | None = None
    stall_seconds: float = 30.0
    ping_every: float | None = None  # during the stall, a keep-alive ping this often: no content
    # The body (a stream's bytes, or a message's JSON) sent a byte at a time, this many seconds apart
    # (status line and headers at once): a server, or a proxy, that drips.
    drip_seconds: float = 0.0
    # Until the test sets `release` (or the fake closes), `holding` set meanwhile, the reply waits:
    # `held`, before it begins (its status line); with hold_after_deltas, after that many
    # content_block_delta events. A reply still on its way for as long as the test needs, to act
    # during it without timing anything.
    held: bool = False
    hold_after_deltas: int | None = None
    holding: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)
    release: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)
    omit_message_stop: bool = False
    unknown_event_after: int | None = None
    partial_tool_json: str | None = None  # raw input JSON text for the last tool_use block
    # A 200 answer that is not what was asked for (a proxy's HTML page, a server ignoring
    # "stream": true): sent as is, with this content type ("" for none).
    body_instead_of_stream: bytes | None = None
    body_content_type: str = "application/json"

    def __post_init__(self) -> None:
        self.usage = {**DEFAULT_USAGE, **self.usage}
        for block in self.blocks:
            if block.get("type") not in ("text", "tool_use", "thinking", "redacted_thinking"):
                raise ValueError(
                    f"Reply supports text, tool_use and thinking blocks, not {block.get('type')!r}"
                )

    @property
    def final_stop_reason(self) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(b["type"] == "tool_use" for b in self.blocks) else "end_turn"


def text_reply(text: str, **kw: Any) -> Reply:
    return Reply(blocks=[{"type": "text", "text": text}], **kw)


def tool_reply(
    name: str, input: dict[str, Any], *, text: str | None = None, id: str | None = None, **kw: Any
) -> Reply:
    """One tool call, after an optional text block; the id is generated unless given."""
    reply = multi_tool_reply([(name, input)], text=text, **kw)
    if id is not None:
        reply.blocks[-1]["id"] = id
    return reply


def multi_tool_reply(calls: list[tuple[str, dict[str, Any]]], text: str | None = None, **kw: Any) -> Reply:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for name, tool_input in calls:
        blocks.append({"type": "tool_use", "id": new_tool_use_id(), "name": name, "input": tool_input})
    return Reply(blocks=blocks, **kw)


def error_reply(
    status: int,
    *,
    retry_after: float | None = None,
    error_type: str | None = None,
    message: str | None = None,
    **kw: Any,
) -> Reply:
    """An HTTP error answer; `retry_after` may be fractional seconds (the SDK honours that)."""
    headers = dict(kw.pop("headers", {}))
    if retry_after is not None:
        headers["retry-after"] = str(retry_after)
    error_type = error_type or ERROR_TYPES.get(status, "api_error")
    message = message or f"fake {error_type} ({status})"
    return Reply(status=status, headers=headers, error_type=error_type, error_message=message, **kw)


def new_tool_use_id() -> str:
    return "toolu_" + uuid.uuid4().hex[:24]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: dict[str, Any]
    received_at: float  # time.monotonic()
    validation_error: str | None = None  # why the fake answered 400
    unscripted: bool = False  # no reply was queued, so the fake answered 500
    size: int = 0  # bytes of the body
    prompt_tokens: int = 0  # with FakeAnthropic.bytes_per_token: the tokens it counted
    too_long: bool = False  # more prompt_tokens than FakeAnthropic.context_window: answered 400

    @property
    def stream(self) -> bool:
        return self.body.get("stream") is True

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages") or []

    @property
    def system(self) -> str | list[dict[str, Any]] | None:
        return self.body.get("system")

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.body.get("tools") or []

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def api_key(self) -> str | None:
        """The key sent, whichever header carried it (SDK 2.x sends `authorization: Bearer <key>`)."""
        bearer = self.headers.get("authorization", "")
        return self.headers.get("x-api-key") or (bearer.removeprefix("Bearer ") if bearer else None)


# ---------------------------------------------------------------- response bodies


def message_object(reply: Reply, model: str, message_id: str) -> dict[str, Any]:
    """The complete `message` object a non-streaming request gets back."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": reply.blocks,
        "stop_reason": reply.final_stop_reason,
        "stop_sequence": reply.stop_sequence,
        "usage": reply.usage,
    }


def stream_events(reply: Reply, model: str, message_id: str) -> list[SseEvent]:
    """The SSE events of a successful stream, in the order the real API sends them."""
    start_usage = {**reply.usage, "output_tokens": min(1, reply.usage["output_tokens"])}
    started = {**message_object(reply, model, message_id), "content": [], "stop_reason": None}
    events: list[SseEvent] = [_event("message_start", message=started | {"usage": start_usage})]
    last_tool_index = max((i for i, b in enumerate(reply.blocks) if b["type"] == "tool_use"), default=None)
    for index, block in enumerate(reply.blocks):
        events.append(_event("content_block_start", index=index, content_block=_opening(block)))
        if index == 0:
            events.append(_event("ping"))
        raw_json = reply.partial_tool_json if index == last_tool_index else None
        for delta in block_deltas(block, reply.chunk_size, raw_json):
            events.append(_event("content_block_delta", index=index, delta=delta))
        events.append(_event("content_block_stop", index=index))
    if not reply.blocks:
        events.append(_event("ping"))
    delta = {"stop_reason": reply.final_stop_reason, "stop_sequence": reply.stop_sequence}
    usage = {"output_tokens": reply.usage["output_tokens"]}
    events.append(_event("message_delta", delta=delta, usage=usage))
    if not reply.omit_message_stop:
        events.append(_event("message_stop"))
    return events


def _event(name: str, **fields: Any) -> SseEvent:
    return name, {"type": name, **fields}


def _opening(block: dict[str, Any]) -> dict[str, Any]:
    """A block as its content_block_start carries it: empty but for what never streams."""
    if block["type"] == "text":
        return {"type": "text", "text": ""}
    if block["type"] == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    if block["type"] == "redacted_thinking":
        return dict(block)  # its data comes whole, as the real API sends it
    return {**block, "input": {}}


def block_deltas(block: dict[str, Any], chunk_size: int, raw_json: str | None) -> Iterator[dict[str, Any]]:
    if block["type"] == "text":
        for piece in _slices(block["text"], chunk_size):
            yield {"type": "text_delta", "text": piece}
        return
    if block["type"] == "thinking":
        for piece in _slices(block["thinking"], chunk_size):
            yield {"type": "thinking_delta", "thinking": piece}
        yield {
            "type": "signature_delta",
            "signature": block["signature"],
        }  # the last delta, as the API sends it
        return
    if block["type"] == "redacted_thinking":
        return
    yield {"type": "input_json_delta", "partial_json": ""}  # the real API opens with an empty slice
    text = json.dumps(block["input"]) if raw_json is None else raw_json
    for piece in _slices(text, chunk_size):
        yield {"type": "input_json_delta", "partial_json": piece}


def _slices(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), max(1, size)):
        yield text[start : start + size]


def encode_event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _refuse_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def error_body(error_type: str, message: str, request_id: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}, "request_id": request_id}


# ---------------------------------------------------------------- request validation


class FakeAnthropic:
    """Serves scripted replies on 127.0.0.1:<free port> from construction until `close()`."""

    def __init__(self) -> None:
        self.stream_replies: deque[Reply] = deque()  # for requests with "stream": true
        self.plain_replies: deque[Reply] = deque()  # for the others
        # Consulted before the queues; returning None falls through to them.
        self.responder: Callable[[RecordedRequest], Reply | None] | None = None
        self.requests: list[RecordedRequest] = []
        # Set bytes_per_token and every reply reports `input_tokens` grown with the request's size,
        # as a real server counts them; with context_window too, a request with more tokens than that
        # gets the real API's 400 ("prompt is too long") and takes no scripted reply.
        self.bytes_per_token: float | None = None
        self.context_window: int | None = None
        # The thinking sent with tool calls (checked when their results come back), and the
        # `thinking.type` values "the model" takes: ("adaptive",) plays a model that refuses a budget.
        self.issued_thinking: dict[str, list[dict[str, Any]]] = {}
        self.thinking_prefixes: dict[str, str] = {}  # what each thinking block was written after
        self.thinking_types: tuple[str, ...] = REQUEST_TYPES
        self._arrivals = threading.Condition()
        self._stopping = threading.Event()  # wakes delayed and stalled handlers at close()
        self._held: list[Reply] = []  # replies waiting for their `release`: released at close()
        self._ids = itertools.count(1)
        self._server = _Server(self)
        self._wake_read, self._wake_write = socket.socketpair()
        self._serve_thread = threading.Thread(
            target=self._server.serve_until_woken, args=(self._wake_read,), name=THREAD_NAME, daemon=True
        )
        self._serve_thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        with self._arrivals:
            if not self._arrivals.wait_for(lambda: len(self.requests) >= n, timeout):
                got = len(self.requests)
                raise TimeoutError(f"fake server: expected {n} requests within {timeout}s, got {got}")
            return list(self.requests)

    def close(self) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()
        with self._arrivals:
            for reply in self._held:
                reply.release.set()
        self._wake_write.send(b"x")  # stop accepting, at once
        self._serve_thread.join(SHUTDOWN_JOIN_SECONDS)
        handler_threads = self._server.abort_connections()
        for thread in handler_threads:
            thread.join(SHUTDOWN_JOIN_SECONDS)
        self._server.server_close()
        self._wake_read.close()
        self._wake_write.close()

    def __enter__(self) -> FakeAnthropic:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _hold(self, reply: Reply) -> bool:
        """Wait until the test releases `reply` (held, or at hold_after_deltas); False if the fake
        closed meanwhile."""
        with self._arrivals:
            self._held.append(reply)
        reply.holding.set()
        if not self._stopping.is_set():  # (else close() may have released the others before this one)
            reply.release.wait(HOLD_SECONDS)
        return not self._stopping.is_set()

    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):04d}"

    def _admit(self, request: RecordedRequest) -> Reply | None:
        """Validate, pick the reply and record the request; None means the answer is an error."""
        if request.path == MESSAGES_PATH:
            request.validation_error = request.validation_error or validate_request(
                request.body, self.issued_thinking, self.thinking_types, self.thinking_prefixes
            )
        reply = None
        if request.path == MESSAGES_PATH and request.validation_error is None and self.bytes_per_token:
            request.prompt_tokens = math.ceil(request.size / self.bytes_per_token)
            request.too_long = self.context_window is not None and request.prompt_tokens > self.context_window
        if request.path == MESSAGES_PATH and request.validation_error is None and not request.too_long:
            reply = self.responder(request) if self.responder else None
            queue = self.stream_replies if request.stream else self.plain_replies
            if reply is None:
                with contextlib.suppress(IndexError):  # popleft, not a len() check: handlers race
                    reply = queue.popleft()
            request.unscripted = reply is None
            if reply is not None and reply.status == 200:
                self.issued_thinking.update(issued_with_calls(reply.blocks))
                self.thinking_prefixes.update(written_after(request.body, reply.blocks))
            if reply is not None and request.prompt_tokens and reply.status == 200:
                counted = {**reply.usage, "input_tokens": request.prompt_tokens}
                reply = dataclasses.replace(reply, usage=counted)
        with self._arrivals:
            self.requests.append(request)
            self._arrivals.notify_all()
        return reply


class _Server(ThreadingHTTPServer):
    """Keeps track of its connection threads and sockets so close() can end them all."""

    daemon_threads = True

    def __init__(self, fake: FakeAnthropic) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake
        self._lock = threading.Lock()
        self._connections: dict[threading.Thread, socket.socket] = {}

    def serve_until_woken(self, wake: socket.socket) -> None:
        """Accept connections until `wake` is readable. (`serve_forever` would only see a shutdown
        at its next poll: 25 ms on average, in each of a thousand tests.)"""
        with selectors.DefaultSelector() as selector:
            selector.register(self, selectors.EVENT_READ)
            selector.register(wake, selectors.EVENT_READ)
            while True:
                if any(key.fileobj is wake for key, _ in selector.select()):
                    return
                try:
                    request, client_address = self.get_request()
                except OSError:
                    continue
                self.process_request(request, client_address)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self._serve_connection,
            args=(request, client_address),
            name=f"{THREAD_NAME}-conn",
            daemon=True,
        )
        with self._lock:
            self._connections[thread] = request
        thread.start()

    def _serve_connection(self, request: Any, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            with self._lock:
                self._connections.pop(threading.current_thread(), None)

    def abort_connections(self) -> list[threading.Thread]:
        """Shut every open connection, which also ends handlers idling in keep-alive reads."""
        with self._lock:
            connections = list(self._connections.items())
        for _, sock in connections:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        return [thread for thread, _ in connections]

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (read timeouts, abandoned streams) and close() cutting sockets are expected.
        if not (self.fake._stopping.is_set() or isinstance(sys.exc_info()[1], ConnectionError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked bodies, like the real API
    # TCP_NODELAY, as real API servers set it: otherwise each small write after the first waits for
    # the client's delayed ACK (~40 ms), which would dominate any latency measured through the fake.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_POST(self) -> None:
        fake = self.server.fake
        request = self._read_request()
        reply = fake._admit(request)
        request_id = fake._next_id("req")
        if request.path != MESSAGES_PATH:
            self._send_error(404, "not_found_error", f"fake server: no route {request.path}", request_id)
        elif request.validation_error:
            self._send_error(400, "invalid_request_error", request.validation_error, request_id)
        elif request.too_long:
            message = f"prompt is too long: {request.prompt_tokens} tokens > {fake.context_window} maximum"
            self._send_error(400, "invalid_request_error", message, request_id)
        elif reply is None:
            self._send_error(500, "api_error", NO_REPLY_MESSAGE, request_id)
        elif (reply.held and not fake._hold(reply)) or fake._stopping.wait(reply.delay):
            self.close_connection = True
        elif reply.status != 200:
            error_type = reply.error_type or ERROR_TYPES.get(reply.status, "api_error")
            message = reply.error_message or f"fake {error_type}"
            self._send_error(reply.status, error_type, message, request_id, reply.headers, retry=None)
        elif reply.body_instead_of_stream is not None:
            self._send_body(reply.body_instead_of_stream, reply.body_content_type, request_id)
        elif request.stream:
            self._send_stream(reply, request, request_id)
        else:
            body = message_object(reply, request.model or "", fake._next_id("msg"))
            self._send_json(200, body, request_id, reply.headers, drip_seconds=reply.drip_seconds)

    def _read_request(self) -> RecordedRequest:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:  # strict, as the real API: NaN and Infinity are not JSON
            body = json.loads(raw, parse_constant=_refuse_json_constant)
        except ValueError:
            body = None
        return RecordedRequest(
            method=self.command,
            path=urlsplit(self.path).path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body if isinstance(body, dict) else {},
            received_at=time.monotonic(),
            size=len(raw),
            validation_error=None if isinstance(body, dict) else "request body must be a JSON object",
        )

    def _send_json(
        self,
        status: int,
        body: dict[str, Any],
        request_id: str,
        headers: dict[str, str],
        drip_seconds: float = 0,
    ) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", request_id)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if not drip_seconds:
            self.wfile.write(payload)
        for byte in payload if drip_seconds else b"":
            if self.server.fake._stopping.wait(drip_seconds):
                return
            self.wfile.write(bytes([byte]))

    def _send_body(self, body: bytes, content_type: str, request_id: str) -> None:
        self.send_response(200)
        if content_type:  # "" sends none at all
            self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.send_header("request-id", request_id)
        self.end_headers()
        self.wfile.write(body)

    def _send_error(
        self,
        status: int,
        error_type: str,
        message: str,
        request_id: str,
        headers: dict[str, str] | None = None,
        retry: bool | None = False,
    ) -> None:
        # The fake's own refusals say "don't retry", else the SDK would repeat them and blur the test.
        headers = dict(headers or {})
        if retry is not None:
            headers["x-should-retry"] = str(retry).lower()
        self._send_json(status, error_body(error_type, message, request_id), request_id, headers)

    def _send_stream(self, reply: Reply, request: RecordedRequest, request_id: str) -> None:
        stopping = self.server.fake._stopping
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        # Chunked, so a connection cut short is a protocol error for the client, not a clean end.
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", request_id)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        events = stream_events(reply, request.model or "", self.server.fake._next_id("msg"))
        deltas = 0
        for sent, (name, data) in enumerate(events):
            if sent == reply.error_event_after:
                overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
                self._write_chunk(encode_event("error", overloaded))
                break
            if sent == reply.drop_after:
                self._drop_inside(encode_event(name, data))
                return
            if sent == reply.stall_after and self._stall(reply):
                self.close_connection = True
                return
            if sent == reply.unknown_event_after:
                self._write_chunk(encode_event(*_event("content_block_magic", index=0)))
            if not self._write_event(encode_event(name, data), reply.drip_seconds):
                self.close_connection = True
                return
            if name != "content_block_delta":
                continue
            deltas += 1
            if reply.delta_delay and stopping.wait(reply.delta_delay):
                self.close_connection = True
                return
            if deltas == reply.hold_after_deltas and not self.server.fake._hold(reply):
                self.close_connection = True
                return
        self._write_chunk(b"")  # the zero-length chunk ends the body

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _write_event(self, event: bytes, drip_seconds: float) -> bool:
        """One event, whole or (dripping) a byte per chunk; False when the fake closed meanwhile."""
        if not drip_seconds:
            self._write_chunk(event)
        for byte in event if drip_seconds else b"":
            if self.server.fake._stopping.wait(drip_seconds):
                return False
            self._write_chunk(bytes([byte]))
        return True

    def _stall(self, reply: Reply) -> bool:
        """Send nothing of the reply for stall_seconds (a ping every ping_every, if set); True when
        the fake closed meanwhile."""
        stopping = self.server.fake._stopping
        if reply.ping_every is None:
            return stopping.wait(reply.stall_seconds)
        for _ in range(math.ceil(reply.stall_seconds / reply.ping_every)):
            if stopping.wait(reply.ping_every):
                return True
            self._write_chunk(encode_event(*_event("ping")))
        return False

    def _drop_inside(self, event: bytes) -> None:
        """Send the event up to the middle of its JSON, then cut the connection without ending the body."""
        json_start = event.index(b"data: ") + len(b"data: ")
        self._write_chunk(event[: json_start + (len(event) - json_start) // 2])
        self.connection.shutdown(socket.SHUT_RDWR)
        self.connection.close()
        self.close_connection = True
