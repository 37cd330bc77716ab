"""Trying a failed model call again: how long to wait, when not to, and saying so before each wait.

The SDK's own retries are off (llm/client.py tells which failures are worth another try), so this
loop is the one place that waits: on the calling thread, where Ctrl+C (and Esc, which sends it) ends
the wait at once. A wait never outlasts a side query's deadline, nor RETRY_AFTER_CAP_S.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from mini_claude.core.events import Retrying

INITIAL_DELAY_S = 0.5  # the SDK's backoff: 0.5 s, 1 s, 2 s, … at most 8 s, each less up to a quarter
MAX_DELAY_S = 8.0
JITTER = 0.25
# A server asking for a longer wait gets an error saying when it may be tried again, rather than a
# session that seems frozen for an hour.
RETRY_AFTER_CAP_S = 60.0

T = TypeVar("T")
RetryListener = Callable[[Retrying], None]


@dataclass(frozen=True)
class Failure:
    """An attempt that failed in a way worth another try: why, in a few words, and the wait the
    server asked for (seconds, None when it said nothing)."""

    reason: str  # "API error 529 (overloaded)", "connection failed (ConnectError)"
    retry_after: float | None = None


class Retries:
    """Calls an attempt until it succeeds, fails in a way not worth retrying, or `max_retries` are
    spent; `on_retry` hears of each retry before its wait. Afterwards `made` counts the retries."""

    def __init__(self, max_retries: int, on_retry: RetryListener, deadline: float | None = None) -> None:
        self.max_retries = max_retries
        self.on_retry = on_retry
        self.deadline = deadline  # time.monotonic() after which no wait is begun
        self.made = 0

    def call(self, attempt: Callable[[], T], failure_of: Callable[[Exception], Failure | None]) -> T:
        """The attempt's result; else its last error, raised as it came."""
        while True:
            try:
                return attempt()
            except Exception as error:
                failure = failure_of(error)
                if failure is None or self.made >= self.max_retries:
                    raise
                delay = backoff(self.made) if failure.retry_after is None else failure.retry_after
                if delay > RETRY_AFTER_CAP_S or (
                    self.deadline is not None and time.monotonic() + delay >= self.deadline
                ):
                    raise
                self.made += 1
                self.on_retry(Retrying(self.made, self.max_retries, delay, failure.reason))
                time.sleep(delay)


def backoff(retries_made: int) -> float:
    """The wait before the next retry when the server named none: exponential, with jitter."""
    return min(INITIAL_DELAY_S * 2.0 ** min(retries_made, 32), MAX_DELAY_S) * (1 - JITTER * random.random())


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait the server asked for, in seconds: `retry-after-ms`, else `retry-after` as seconds
    or as an HTTP date; None when it asked for none (or for no wait at all)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            seconds = float(headers.get(name, "")) * scale
        except ValueError:
            continue
        if math.isfinite(seconds):
            return seconds if seconds > 0 else None
    when = email.utils.parsedate_tz(headers.get("retry-after", ""))
    seconds = email.utils.mktime_tz(when) - time.time() if when is not None else 0.0
    return seconds if seconds > 0 else None
