"""A deadline over every read and write of a connection to the model server, for as long as a wait
must end as a whole: until a reply's headers (and an error's body) are in, or a side query's
total timeout. The HTTP library's timeout bounds each read alone, so a server that drips its
headers a byte a second, or an error body that never ends, was waited on for as long as it went on.

Installed on the SDK client's connection pools (`bound_connections`): each read or write is given
at most what is left of the calling thread's deadline (`within`), and one past it is a read
timeout, which the SDK reports as any timeout.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from mini_claude.core.interrupts import stop_event, stop_if_requested

_local = threading.local()
STOP_CHECK_S = 0.2  # how often a read on a stoppable thread looks whether it should stop


@contextlib.contextmanager
def within(at: float) -> Iterator[None]:
    """Every read and write this thread makes of a model server connection ends by `at` (a
    time.monotonic())."""
    previous: float | None = getattr(_local, "at", None)
    _local.at = at
    try:
        yield
    finally:
        _local.at = previous


def bound_connections(http_client: Any) -> None:
    """Make the connection pools of the SDK's httpx client keep `within`'s deadlines."""
    import httpcore2  # the SDK's transport, through httpx2; imported with the SDK

    class DeadlineStream(httpcore2.NetworkStream):
        def __init__(self, stream: Any) -> None:
            self._stream = stream

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            if stop_event() is None:
                return self._stream.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))  # type: ignore[no-any-return]
            # A thread that works for another (a sub-agent) waits in slices, so a stop is noticed.
            while True:
                left = _left(timeout, httpcore2.ReadTimeout)
                step = STOP_CHECK_S if left is None else min(left, STOP_CHECK_S)
                try:
                    return self._stream.read(max_bytes, step)  # type: ignore[no-any-return]
                except httpcore2.ReadTimeout:
                    stop_if_requested()
                    if left is not None and left <= step:
                        raise
                    timeout = None if timeout is None else timeout - step

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._stream.write(buffer, _left(timeout, httpcore2.WriteTimeout))

        def close(self) -> None:
            self._stream.close()

        def start_tls(self, *args: Any, **kwargs: Any) -> Any:
            return DeadlineStream(self._stream.start_tls(*args, **kwargs))

        def get_extra_info(self, info: str) -> Any:
            return self._stream.get_extra_info(info)

    class DeadlineBackend(httpcore2.NetworkBackend):
        def __init__(self, backend: Any) -> None:
            self._backend = backend

        def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
            return DeadlineStream(self._backend.connect_tcp(*args, **kwargs))

        def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
            return DeadlineStream(self._backend.connect_unix_socket(*args, **kwargs))

        def sleep(self, seconds: float) -> None:
            self._backend.sleep(seconds)

    transports = [getattr(http_client, "_transport", None), *getattr(http_client, "_mounts", {}).values()]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        if pool is not None and hasattr(pool, "_network_backend"):
            pool._network_backend = DeadlineBackend(pool._network_backend)


def _left(timeout: float | None, too_late: type[Exception]) -> float | None:
    """`timeout`, shortened to what is left of this thread's deadline; `too_late` once it passed."""
    at: float | None = getattr(_local, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise too_late("the deadline for this answer passed")
    return left if timeout is None else min(timeout, left)
