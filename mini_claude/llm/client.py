"""The model server seen from the agent: streamed calls, side queries, token usage.

This is the only module that imports `anthropic`. Importing the SDK takes over a second, so it
happens lazily on a background thread (`preload`) while the user is already typing. What each
stream event adds to the response is read in llm/streamed_response.py.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

from mini_claude.core.config import ANTHROPIC_API_URL, Settings
from mini_claude.core.events import UsageReport
from mini_claude.core.untrusted import encodable
from mini_claude.llm import model_errors
from mini_claude.llm.context_overflow import Overflow, context_overflow
from mini_claude.llm.retry_watch import RetryListener, retry_watch
from mini_claude.llm.streamed_response import (
    StreamedResponse,
    StreamUpdate,
    apply_stream_event,
    describe_usage,
)

log = logging.getLogger("mini_claude")

NO_KEY_PLACEHOLDER = "not-needed"  # local servers without auth still need some key for the SDK
CONNECT_TIMEOUT = 10.0
SIDE_QUERY_MAX_RETRIES = 0  # recall is optional: a failed side query is skipped, never retried
EVENT_STREAM = "text/event-stream"
NOT_A_STREAM_READ_BYTES = 4096  # of a body that is no stream, enough to quote its start
OVERFLOW_DETAIL_MAX_CHARS = 4096  # of an error's words looked through for a context window's size
MISSING_CREDENTIALS = (
    "No API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
    "or ANTHROPIC_BASE_URL to use a local Anthropic-compatible server."
)


class ModelError(Exception):
    """A model call failed after the SDK's own retries; the message is one line for the user."""


class PromptTooLong(ModelError):
    """The server refused the request as larger than the model's context window; `tokens` is its
    count of the prompt and `window` the window's size when it said them (else 0). Compacting
    the conversation can make it fit."""

    def __init__(self, message: str, tokens: int = 0, window: int = 0) -> None:
        super().__init__(message)
        self.tokens = tokens
        self.window = window


class ModelClient:
    """Wraps the SDK client: created once, shared by the main loop and the recall thread."""

    def __init__(self, settings: Settings, *, on_retry: RetryListener | None = None) -> None:
        self.settings = settings
        self.on_retry = on_retry  # told of each retry of a conversation call, before its wait
        self._client: Any = None
        self._lock = threading.Lock()
        self._usage_lock = threading.Lock()
        self.usage_total = UsageReport()  # the conversation's calls
        self.usage_by_model: dict[str, UsageReport] = {}  # the same calls, by model (for /cost)
        self.side_usage_total = UsageReport()  # side queries (memory recall, `#` notes, tidy), counted apart
        self.side_queries = 0
        # The same, by what they were for ("recall": recall and `#` notes; "tidy"), for /cost.
        self.side_usage_by_purpose: dict[str, tuple[int, UsageReport]] = {}
        self._preload_thread: threading.Thread | None = None

    @property
    def configured(self) -> bool:
        return self.settings.can_call_model

    def preload(self) -> None:
        """Import the SDK on a daemon thread so the first message does not wait for it."""
        if self._preload_thread is None and self.configured:
            self._preload_thread = threading.Thread(target=self._get_client, name="sdk-preload", daemon=True)
            self._preload_thread.start()

    def _get_client(self) -> Any:
        """The SDK client; raises ModelError when there is nothing to call it with."""
        if not self.configured:
            raise ModelError(MISSING_CREDENTIALS)
        with self._lock:
            if self._client is None:
                started = time.perf_counter()
                import anthropic

                s = self.settings
                api_key = s.api_key or (None if s.auth_token else NO_KEY_PLACEHOLDER)
                self._client = anthropic.Anthropic(
                    api_key=api_key,
                    auth_token=None if s.api_key else s.auth_token,
                    # Never None: the SDK would read ANTHROPIC_BASE_URL itself, blank included.
                    base_url=s.base_url or ANTHROPIC_API_URL,
                    max_retries=s.max_retries,
                    timeout=anthropic.Timeout(s.api_timeout, connect=CONNECT_TIMEOUT),
                    middleware=[retry_watch().middleware],
                )
                log.debug("model client ready in %.2f s", time.perf_counter() - started)
            return self._client

    def _add_usage(self, usage: UsageReport, *, model: str = "", side: str = "") -> None:
        with self._usage_lock:
            if side:
                self.side_usage_total = self.side_usage_total + usage
                self.side_queries += 1
                count, used = self.side_usage_by_purpose.get(side, (0, UsageReport()))
                self.side_usage_by_purpose[side] = (count + 1, used + usage)
            else:
                self.usage_total = self.usage_total + usage
                self.usage_by_model[model] = self.usage_by_model.get(model, UsageReport()) + usage

    def stream(
        self,
        *,
        model: str,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int,
        response: StreamedResponse,
    ) -> Iterator[StreamUpdate]:
        """Stream one response into `response`, yielding what the user should see as it arrives."""
        client = self._get_client()
        try:
            with retry_watch().listening(self.on_retry, self.settings.max_retries):
                stream = client.messages.create(
                    model=model, system=system, messages=messages, tools=tools, max_tokens=max_tokens,
                    stream=True,
                )  # fmt: skip
            with stream:
                _check_is_event_stream(stream.response)
                for event in stream:
                    yield from apply_stream_event(response, event)
            if response.stop_reason is None:  # a clean end of the body, yet no reply or half of one
                raise ModelError(model_errors.stream_ended_early(response.started))
        except Exception as error:
            s = self.settings
            why = describe_error(error, s, s.api_timeout, "MINI_CLAUDE_API_TIMEOUT", s.max_retries, model)
            why = encodable(why)  # it quotes the server's own words
            too_long = prompt_too_long(error)
            if too_long is not None:
                raise PromptTooLong(why, too_long.tokens, too_long.window) from error
            raise ModelError(why) from error
        finally:
            self._add_usage(response.usage, model=model)

    def side_query(
        self,
        *,
        system: str,
        user: str,
        max_tokens: int,
        timeout: float | None = None,
        purpose: str = "recall",
    ) -> str:
        """A small non-streaming call without tools (e.g. memory selection); returns its text.
        `purpose` names what it is for in /cost ("recall", which `#` notes share, or "tidy")."""
        client = self._get_client()
        timeout = timeout or self.settings.side_query_timeout
        try:
            message = client.with_options(
                max_retries=SIDE_QUERY_MAX_RETRIES, timeout=timeout
            ).messages.create(
                model=self.settings.side_model,
                system=system,
                messages=[{"role": "user", "content": user}],
                max_tokens=max_tokens,
            )
        except Exception as error:
            s, variable = self.settings, "MINI_CLAUDE_SIDE_QUERY_TIMEOUT"
            why = describe_error(error, s, timeout, variable, SIDE_QUERY_MAX_RETRIES, s.side_model)
            raise ModelError(encodable(why)) from error
        self._add_usage(describe_usage(getattr(message, "usage", None)), side=purpose)
        texts = (getattr(block, "text", "") for block in message.content or [])
        return encodable("".join(text for text in texts if isinstance(text, str)))


def _check_is_event_stream(http_response: Any) -> None:
    """Raise ModelError when a streamed request got something else back with status 200 (the SDK
    would read it as an empty stream: a silent empty reply). A server that names no type is given
    the benefit of the doubt: an empty or garbled stream still fails, for want of message_start."""
    content_type = http_response.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() in ("", EVENT_STREAM):
        return
    body = b""
    for chunk in http_response.iter_bytes():
        body += chunk
        if len(body) >= NOT_A_STREAM_READ_BYTES:
            break
    raise ModelError(model_errors.not_a_stream(content_type, body, str(http_response.request.url)))


def describe_error(
    error: BaseException, settings: Settings, timeout: float, timeout_variable: str, retries: int, model: str
) -> str:
    """One line saying what went wrong and, where we can tell, what to do about it (the words are
    in llm/model_errors.py; here the SDK's exceptions are told apart)."""
    import anthropic

    if isinstance(error, ModelError):
        return str(error)
    if isinstance(error, anthropic.APITimeoutError) or model_errors.caused_by_timeout(error):
        return model_errors.timed_out(timeout, timeout_variable)
    if isinstance(error, anthropic.APIConnectionError):
        return model_errors.unreachable(settings, model_errors.root_cause(error))
    if isinstance(error, anthropic.APIStatusError):
        request = getattr(error.response, "request", None)
        return model_errors.status_error(
            error.status_code,
            getattr(error, "body", None),
            str(getattr(error, "message", error)),
            str(request.url) if request is not None else "",
            settings=settings,
            model=model,
            retries=retries,
        )
    return model_errors.broke_mid_response(model_errors.root_cause(error))


def prompt_too_long(error: BaseException) -> Overflow | None:
    """For a refusal because the request does not fit the context window (the wordings of the
    servers we know: llm/context_overflow.py), what the server said of its size; else None."""
    import anthropic

    if not isinstance(error, anthropic.APIStatusError):
        return None
    body = getattr(error, "body", None)
    detail = model_errors.error_detail(body, str(getattr(error, "message", error)), OVERFLOW_DETAIL_MAX_CHARS)
    return context_overflow(error.status_code, detail, body)
