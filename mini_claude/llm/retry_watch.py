"""Hearing of the SDK's retries as they happen, so the user reads "retrying in 2 s" instead of
watching a spinner that seems stuck.

The SDK retries 429s, 5xx answers and failed connections inside one `messages.create` call and
tells only its logger (`Retrying request to URL in N seconds`, just before it sleeps). Two hooks
that `llm/client.py` installs put it together, per thread: a middleware (run once per HTTP attempt) notes
why the attempt failed, a handler on the SDK's logger hears the delay and tells that thread's
listener. Neither imports the SDK; if its log line ever changes, retries go unannounced, no worse.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

from mini_claude.core.events import Retrying
from mini_claude.llm.model_errors import innermost, retry_reason

log = logging.getLogger("mini_claude")

SDK_LOGGER = "anthropic._base_client"
RETRY_RECORD_START = "Retrying request"
UNKNOWN_REASON = "the request failed"

RetryListener = Callable[[Retrying], None]


class RetryWatch(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self._local = threading.local()

    @contextlib.contextmanager
    def listening(self, listener: RetryListener | None, max_retries: int) -> Iterator[None]:
        """While the block runs, this thread's retries are told to `listener`."""
        local = self._local
        local.listener, local.max_retries, local.retries, local.reason = listener, max_retries, 0, None
        try:
            yield
        finally:
            local.listener = None

    def middleware(self, request: Any, call_next: Callable[[Any], Any]) -> Any:
        """One HTTP attempt: remember why it failed, for the retry that may follow."""
        try:
            response = call_next(request)
        except Exception as error:
            self._local.reason = retry_reason(None, type(innermost(error)).__name__)
            raise
        status = getattr(response, "status_code", 200)
        if isinstance(status, int) and status >= 400:
            self._local.reason = retry_reason(status)
        return response

    def emit(self, record: logging.LogRecord) -> None:
        local = self._local
        listener = getattr(local, "listener", None)
        if listener is None or not str(record.msg).startswith(RETRY_RECORD_START):
            return
        args = record.args if isinstance(record.args, tuple) else ()
        delays = [arg for arg in args if isinstance(arg, int | float) and not isinstance(arg, bool)]
        local.retries += 1
        event = Retrying(local.retries, local.max_retries, float(delays[-1]) if delays else 0.0,
                         local.reason or UNKNOWN_REASON)  # fmt: skip
        try:
            listener(event)
        except Exception:  # a renderer's bug must not become the SDK's logging error on stderr
            log.exception("telling a retry failed")


_watch: RetryWatch | None = None
_watch_lock = threading.Lock()


def retry_watch() -> RetryWatch:
    """The one watch of this process, attached to the SDK's logger on first use (INFO is needed
    for the retry line to be made at all; a lower level someone set is left alone)."""
    global _watch
    with _watch_lock:
        if _watch is None:
            _watch = RetryWatch()
            sdk_log = logging.getLogger(SDK_LOGGER)
            sdk_log.addHandler(_watch)
            if sdk_log.getEffectiveLevel() > logging.INFO:
                sdk_log.setLevel(logging.INFO)
        return _watch
