"""The model server seen from the agent: streamed calls, side queries, token usage.

This is the only module that imports `anthropic`. Importing the SDK takes over a second, so it
happens lazily on a background thread (`preload`) while the user is already typing. The SDK sends
the requests and sorts their errors; the retries are ours (llm/retries.py), and so is reading the
body (llm/reading.py), so that no wait lasts longer than its timeout says. What each stream event
adds to the response is read in llm/streamed_response.py.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

from mini_claude.core.config import ANTHROPIC_API_URL, Settings
from mini_claude.core.events import Notice, Retrying, UsageReport
from mini_claude.core.untrusted import encodable, visible_text
from mini_claude.llm import model_errors
from mini_claude.llm.context_overflow import context_overflow
from mini_claude.llm.deadline import bound_connections, within
from mini_claude.llm.model_errors import ModelError, PromptTooLong
from mini_claude.llm.reading import OutOfTime, json_or_none, until
from mini_claude.llm.retries import RETRY_AFTER_CAP_S, Failure, Retries, RetryListener, retry_after
from mini_claude.llm.streamed_response import StreamedResponse, StreamUpdate, describe_usage, read_stream
from mini_claude.llm.thinking import BudgetRefused, ThinkingRequests, adaptive_notice

log = logging.getLogger("mini_claude")

NO_KEY_PLACEHOLDER = "not-needed"  # local servers without auth still need some key for the SDK
CONNECT_TIMEOUT = 10.0
EVENT_STREAM = "text/event-stream"
NOT_A_STREAM_READ_BYTES = 4096  # of a body that is no stream, enough to quote its start
OVERFLOW_DETAIL_MAX_CHARS = 4096  # of an error's words looked through for a context window's size
MISSING_CREDENTIALS = (
    "No API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
    "or ANTHROPIC_BASE_URL to use a local Anthropic-compatible server."
)


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
        self.thinking = ThinkingRequests()  # the models that refused a thinking budget
        self._preload_thread: threading.Thread | None = None

    @property
    def configured(self) -> bool:
        return self.settings.can_call_model

    def preload(self) -> None:
        """Import the SDK on a daemon thread so the first message does not wait for it."""
        if self._preload_thread is None and self.configured:
            self._preload_thread = threading.Thread(target=self._get_client, name="sdk-preload", daemon=True)
            self._preload_thread.start()

    def wait_preloaded(self, timeout: float) -> None:
        """Until the SDK preload has finished (at most `timeout` seconds): other background
        start-up work waits its turn rather than slow down the prompt with it."""
        thread = self._preload_thread
        if thread is not None:
            thread.join(timeout)

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
                    max_retries=0,  # ours: llm/retries.py
                    timeout=anthropic.Timeout(s.api_timeout, connect=CONNECT_TIMEOUT),
                )
                bound_connections(self._client._client)  # the SDK's httpx client
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
        self, *, model: str, system: list[dict[str, Any]], messages: list[dict[str, Any]],
        tools: list[dict[str, Any]], max_tokens: int, response: StreamedResponse, thinking: int | None = None,
    ) -> Iterator[StreamUpdate]:  # fmt: skip
        """Stream one response into `response`, yielding what the user should see as it arrives.
        `thinking`: a thinking budget to ask for (llm/thinking.py), None for the model's default.
        Ends with ModelError once the server has sent no content for the API timeout, pings or not."""
        request = {"model": model, "system": system, "messages": messages, "tools": tools}
        field, limit = self.thinking.field(model, thinking, max_tokens)
        try:
            yield from self._stream(request, field, limit, response)
        except BudgetRefused:  # the model thinks adaptively: asked so at once, and from now on
            yield Notice(adaptive_notice(visible_text(model)))
            field, limit = self.thinking.field(model, thinking, max_tokens)
            yield from self._stream(request, field, limit, response)

    def _stream(
        self, request: dict[str, Any], thinking: dict[str, Any] | None, max_tokens: int,
        response: StreamedResponse,
    ) -> Iterator[StreamUpdate]:  # fmt: skip
        client, s, model = self._get_client(), self.settings, request["model"]
        retries = Retries(s.max_retries, self.on_retry or (lambda event: None))
        asked = {**request, "max_tokens": max_tokens, **({"thinking": thinking} if thinking else {})}
        try:
            with contextlib.ExitStack() as stack:
                create = client.messages.with_streaming_response.create

                def attempt() -> Any:  # its headers (or an error's body) within the API timeout
                    with within(time.monotonic() + s.api_timeout):
                        return stack.enter_context(create(**asked, stream=True))

                raw = retries.call(attempt, _failure)
                _check_is_event_stream(raw, time.monotonic() + s.api_timeout)
                yield from read_stream(raw.iter_bytes(), response, s.api_timeout)
            if response.stop_reason is None:  # a clean end of the body, yet no reply or half of one
                raise ModelError(model_errors.stream_ended_early(response.started))
        except Exception as error:
            status, detail = _status_and_detail(error)
            if self.thinking.refused(model, thinking, status, detail):
                raise BudgetRefused from error
            why = describe_error(error, s, s.api_timeout, "MINI_CLAUDE_API_TIMEOUT", retries.made, model)
            why = encodable(why)  # it quotes the server's own words
            # Refused as too long for the context window (llm/context_overflow.py has the wordings)?
            too_long = context_overflow(status, detail, getattr(error, "body", None)) if status else None
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
        `timeout` (else MINI_CLAUDE_SIDE_QUERY_TIMEOUT) bounds it all, retries and a dripping body
        included. `purpose` names what it is for in /cost ("recall", which `#` notes share, or "tidy")."""
        import anthropic

        client, s = self._get_client(), self.settings
        timeout = timeout or s.side_query_timeout
        deadline = time.monotonic() + timeout
        retries = Retries(s.max_retries, _log_side_retry, deadline)

        def attempt() -> bytes:
            left = deadline - time.monotonic()
            if left <= 0:
                raise OutOfTime
            limits = anthropic.Timeout(left, connect=min(CONNECT_TIMEOUT, left))
            with (
                within(deadline),
                client.with_options(timeout=limits).messages.with_streaming_response.create(
                    model=s.side_model,
                    system=system,
                    messages=[{"role": "user", "content": user}],
                    max_tokens=max_tokens,
                ) as raw,
            ):
                return b"".join(until(raw.iter_bytes(), lambda: deadline))

        try:
            body = retries.call(attempt, _failure)
            message = json_or_none(body)
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list):  # a proxy's page, a server of another API
                raise ModelError(model_errors.not_a_message(body))
            usage = describe_usage(message.get("usage"))
        except Exception as error:
            variable = "MINI_CLAUDE_SIDE_QUERY_TIMEOUT"
            why = describe_error(error, s, timeout, variable, retries.made, s.side_model, total=True)
            raise ModelError(encodable(why)) from error
        self._add_usage(usage, side=purpose)
        texts = (block.get("text") for block in content if isinstance(block, dict))
        return encodable("".join(text for text in texts if isinstance(text, str)))


def _failure(error: Exception) -> Failure | None:
    """Whether a failed attempt is worth another, as the SDK judges: a 408, 409, 429 or 5xx answer
    (unless the server says `x-should-retry: false`, or `true` for another), a failed connection."""
    import anthropic

    if isinstance(error, anthropic.APIStatusError):
        headers = error.response.headers
        told = headers.get("x-should-retry")
        if told == "false" or (told != "true" and not model_errors.worth_retrying(error.status_code)):
            return None
        return Failure(model_errors.retry_reason(error.status_code), retry_after(headers))
    if isinstance(error, anthropic.APIConnectionError):
        return Failure(model_errors.retry_reason(None, type(model_errors.innermost(error)).__name__))
    return None


def _log_side_retry(event: Retrying) -> None:
    log.info("side query: %s, retrying in %.1f s (retry %d of %d)", event.reason, event.delay_s,
             event.attempt, event.max_retries)  # fmt: skip


def _check_is_event_stream(http_response: Any, deadline: float) -> None:
    """Raise ModelError when a streamed request got something else back with status 200 (read as
    an event stream, it would be a silent empty reply), quoting what came by `deadline`. A server
    that names no type is given the benefit of the doubt: an empty or garbled stream still fails,
    for want of message_start."""
    content_type = http_response.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() in ("", EVENT_STREAM):
        return
    body = b""
    for chunk in until(http_response.iter_bytes(), lambda: deadline):
        body += chunk
        if len(body) >= NOT_A_STREAM_READ_BYTES:
            break
    raise ModelError(model_errors.not_a_stream(content_type, body, str(http_response.http_request.url)))


def describe_error(
    error: BaseException,
    settings: Settings,
    timeout: float,
    timeout_variable: str,
    retries: int,
    model: str,
    *,
    total: bool = False,
) -> str:
    """One line saying what went wrong and, where we can tell, what to do about it (the words are
    in llm/model_errors.py; here the SDK's exceptions are told apart). `retries`: those made;
    `total`: the timeout bounds the whole call, not a silence."""
    import anthropic

    if isinstance(error, ModelError):
        return str(error)
    if isinstance(error, anthropic.APITimeoutError) or model_errors.caused_by_timeout(error):
        return model_errors.timed_out(timeout, timeout_variable, total=total)
    if isinstance(error, anthropic.APIConnectionError):
        return model_errors.unreachable(settings, model_errors.root_cause(error))
    if isinstance(error, anthropic.APIStatusError):
        request = getattr(error.response, "request", None)
        asked = retry_after(error.response.headers)
        return model_errors.status_error(
            error.status_code,
            getattr(error, "body", None),
            str(getattr(error, "message", error)),
            str(request.url) if request is not None else "",
            settings=settings,
            model=model,
            retries=retries,
            not_waited=asked if asked is not None and asked > RETRY_AFTER_CAP_S else None,
        )
    return model_errors.broke_mid_response(model_errors.root_cause(error))


def _status_and_detail(error: BaseException) -> tuple[int, str]:
    """An error answer's status and words (0 and "" for another failure)."""
    import anthropic

    if not isinstance(error, anthropic.APIStatusError):
        return 0, ""
    body, message = getattr(error, "body", None), str(getattr(error, "message", error))
    return error.status_code, model_errors.error_detail(body, message, OVERFLOW_DETAIL_MAX_CHARS)
