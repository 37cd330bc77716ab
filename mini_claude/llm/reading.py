"""Reading a response body as its bytes arrive, against a clock: the chunks until a deadline, and
the server-sent events of a stream (and the JSON in them).

Ours rather than the SDK's so that every chunk hands control back: a server that sends only pings,
or drips bytes that never complete an answer, is stopped by llm/client.py's clock, not waited on
for as long as it keeps the connection busy.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any


class OutOfTime(TimeoutError):
    """The body went on past its deadline (a read timeout only notices a server that sends nothing)."""


def until(chunks: Iterable[bytes], deadline: Callable[[], float]) -> Iterator[bytes]:
    """The chunks as they arrive; OutOfTime for the first to arrive after `deadline()`, a
    time.monotonic() that may move on (a stream's does with each piece of its content)."""
    for chunk in chunks:
        if time.monotonic() > deadline():
            raise OutOfTime
        yield chunk


def sse_events(chunks: Iterable[bytes]) -> Iterator[tuple[str, str]]:
    """(event name, data) of each server-sent event, as soon as the blank line ending it arrives.
    Comments and events without a name or data are skipped (as the SDK does); an event the
    body's end cuts off is dropped."""
    pending = b""
    name, data = "", list[str]()
    for chunk in chunks:
        *lines, pending = (pending + chunk).split(b"\n")
        for raw in lines:
            line = raw.removesuffix(b"\r").decode("utf-8", "replace")
            if not line:
                if name and data:
                    yield name, "\n".join(data)
                name, data = "", list[str]()
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)


def json_or_none(text: str | bytes) -> Any:
    """The JSON value of `text`, or None when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None
