"""The pieces of a model call that read what a server sends, on their own: server-sent events split
anywhere, the wait a server asks for in any of its forms. (Through the fake server and the SDK:
tests/adversarial/test_server_faults.py.)"""

from __future__ import annotations

import email.utils
import time

import pytest

from mini_claude.llm.reading import OutOfTime, sse_events, until
from mini_claude.llm.retries import retry_after

STREAM = (
    b": a comment the server sends to keep the line open\r\n"
    b"event: message_start\r\n"
    b'data: {"type": "message_start",\r\n'
    b'data:  "x": 1}\r\n'
    b"\r\n"
    b"data: an event without a name is skipped, as the SDK does\n"
    b"\n"
    b"event: ping\n"
    b"\n"
    b"event: content_block_delta\n"
    b'data:{"text": "caf\xc3\xa9"}\n'
    b"\n"
    b"event: message_stop\n"
    b'data: {"cut off by the end of the body"}'
)
EVENTS = [
    ("message_start", '{"type": "message_start",\n "x": 1}'),
    ("content_block_delta", '{"text": "café"}'),
]


@pytest.mark.parametrize("size", [1, 2, 7, len(STREAM)])
def test_events_come_whole_however_the_bytes_are_split(size: int) -> None:
    chunks = [STREAM[start : start + size] for start in range(0, len(STREAM), size)]

    assert list(sse_events(chunks)) == EVENTS


def test_a_chunk_after_the_deadline_ends_the_reading() -> None:
    chunks = until(iter([b"one", b"two"]), lambda: time.monotonic() - 1)

    with pytest.raises(OutOfTime):
        next(chunks)


def test_a_deadline_that_moves_on_lets_the_chunks_through() -> None:
    assert list(until(iter([b"one", b"two"]), lambda: time.monotonic() + 60)) == [b"one", b"two"]


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),  # the precise one first
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
        ({"retry-after": "0"}, None),  # no wait asked for: the backoff decides
        ({"retry-after": "-5"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "tomorrow"}, None),
        ({}, None),
    ],
)
def test_the_wait_a_server_asks_for(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after(headers) == seconds


def test_the_wait_asked_for_as_an_http_date() -> None:
    asked = retry_after({"retry-after": email.utils.formatdate(time.time() + 120, usegmt=True)})

    assert asked is not None and 100 < asked <= 120
    assert retry_after({"retry-after": email.utils.formatdate(time.time() - 120, usegmt=True)}) is None
