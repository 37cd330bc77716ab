"""A failed model call (ModelError) and what it tells the user: one line saying what went wrong and
what to do.

`llm/client.py` sorts the SDK's exceptions (it alone imports the SDK); the words live here. Every line
names the setting that fixes it where we can tell: a base URL ending in `/v1`, a model name the
server does not know, a key it refuses, a server that is not an Anthropic Messages API at all.
"""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import urlsplit

from mini_claude.core.config import Settings
from mini_claude.llm.retries import RETRY_AFTER_CAP_S

MESSAGES_PATH = "/v1/messages"  # what the SDK appends to ANTHROPIC_BASE_URL
DETAIL_MAX_CHARS = 300
BODY_SNIPPET_CHARS = 80
RETRYABLE_STATUSES = (408, 409, 429)  # and every 5xx, as the SDK would retry them
STATUS_NAMES = {
    408: "request timeout",
    409: "conflict",
    429: "rate limited",
    500: "server error",
    502: "bad gateway",
    503: "unavailable",
    504: "gateway timeout",
    529: "overloaded",
}


class ModelError(Exception):
    """A model call failed (after our retries); the message is one line for the user."""


class PromptTooLong(ModelError):
    """The server refused the request as larger than the model's context window; `tokens` is its
    count of the prompt and `window` the window's size when it said them (else 0). Compacting
    the conversation can make it fit."""

    def __init__(self, message: str, tokens: int = 0, window: int = 0) -> None:
        super().__init__(message)
        self.tokens = tokens
        self.window = window


def timed_out(timeout: float, timeout_variable: str, *, total: bool = False) -> str:
    """`total`: the timeout bounds the whole call; else the time without a byte or a piece of the reply."""
    what = f"did not answer within {timeout:g} s" if total else f"went silent for {timeout:g} s"
    return f"The model server {what} (raise {timeout_variable} if it is just slow)."


def unreachable(settings: Settings, cause: str) -> str:
    return f"Could not reach the model server at {settings.base_url or 'api.anthropic.com'}: {cause}"


def broke_mid_response(cause: str) -> str:
    return f"The connection to the model server broke mid-response: {cause}"


def status_error(
    status: int,
    body: Any,
    message: str,
    url: str,
    *,
    settings: Settings,
    model: str,
    retries: int,
    not_waited: float | None = None,
) -> str:
    """An HTTP error answer after `retries` retries; `body` is the parsed JSON body, if any;
    `not_waited`: the server's retry-after, when it was beyond what we wait."""
    _, error_message = _error_fields(body)
    detail = error_detail(body, message) or f"HTTP {status}"
    if status == 401:
        return f"Authentication failed (401): {detail}. Check ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN."
    if status == 404:
        return not_found(detail, error_message or "", url, settings=settings, model=model)
    if not_waited is not None:
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() + not_waited))
        detail += f" (the server asked to retry in {not_waited:.0f} s, at {at}; "
        detail += f"mini-claude waits {RETRY_AFTER_CAP_S:g} s at most)"
    elif worth_retrying(status) and retries:
        detail += f" (gave up after {retries} {'retry' if retries == 1 else 'retries'})"
    return f"API error {status}: {detail}"


def worth_retrying(status: int) -> bool:
    """The answers the SDK would retry: a request timeout, a conflict, a rate limit, a server error."""
    return status in RETRYABLE_STATUSES or status >= 500


def reported_mid_response(body: Any, data: str) -> str:
    """An `error` event inside an otherwise healthy stream; `body` is its parsed data, if any."""
    return f"The model server reported an error mid-response: {error_detail(body, data) or 'no details'}"


def not_a_message(body: bytes) -> str:
    """A 200 answer to a side query that holds no message content."""
    return (
        f"The model server's answer is not a message ({_snippet(body)!r}): "
        "is ANTHROPIC_BASE_URL an Anthropic Messages API server?"
    )


def error_detail(body: Any, message: str, max_chars: int = DETAIL_MAX_CHARS) -> str:
    """The error's own words: `type: message` from the JSON body, else the first line of the
    SDK's message ("" when there is none), at most `max_chars`."""
    error_type, error_message = _error_fields(body)
    if error_message:
        detail = f"{error_type}: {error_message}" if error_type else error_message
    else:
        detail = message.strip().splitlines()[0] if message.strip() else ""
    return detail[:max_chars]


def not_found(detail: str, error_message: str, url: str, *, settings: Settings, model: str) -> str:
    """A 404: most often ANTHROPIC_BASE_URL already ends in /v1; else the real API says so for a
    model it does not know (`model: NAME`); else nothing answers at that URL."""
    base = settings.base_url
    path = urlsplit(base).path.rstrip("/") if base else ""
    ending = next((end for end in (MESSAGES_PATH, "/v1") if path.endswith(end)), None)
    if base and ending is not None:
        fixed = base.rstrip("/").removesuffix(ending)
        return (
            f"API error 404 at {url}: ANTHROPIC_BASE_URL ends in {ending}, but the SDK adds "
            f"{MESSAGES_PATH} itself; set ANTHROPIC_BASE_URL={fixed}"
        )
    names_model = model and re.search(rf"(?<![\w.-]){re.escape(model)}(?![\w.-])", error_message)
    if error_message.lower().startswith("model") or names_model:
        return (
            f"API error 404: {detail}. The model {model!r} is not known to this server: "
            "check --model, ANTHROPIC_MODEL and MINI_CLAUDE_SIDE_MODEL."
        )
    if base is None:
        return f"API error 404 at {url}: {detail}"
    return (
        f"API error 404 at {url}: {detail}. Nothing answers there: check ANTHROPIC_BASE_URL "
        f"(the server's address without {MESSAGES_PATH}, which the SDK adds)."
    )


def not_a_stream(content_type: str, body: bytes, url: str) -> str:
    """A 200 answer to a streamed request that is no event stream: a proxy's page, a server that
    ignores `stream`, an endpoint that is not the Messages API."""
    snippet = _snippet(body)
    shown = f" ({snippet!r})" if snippet else " (an empty body)"
    kind = content_type.split(";")[0].strip() or "no content type"
    return (
        f"The model server at {url} answered with {kind}{shown}, not an event stream: "
        "is ANTHROPIC_BASE_URL an Anthropic Messages API server?"
    )


def stream_ended_early(saw_start: bool) -> str:
    if not saw_start:
        return (
            "The model server's stream ended without a reply (no message_start event): "
            "is ANTHROPIC_BASE_URL an Anthropic Messages API server?"
        )
    return "The model server's stream ended before the reply was complete (no stop reason); try again."


def retry_reason(status: int | None, cause: str | None = None) -> str:
    """Why we are about to retry: an HTTP status, or a connection that failed."""
    if status is None:
        return f"connection failed ({cause})" if cause else "connection failed"
    name = STATUS_NAMES.get(status)
    return f"API error {status} ({name})" if name else f"API error {status}"


def caused_by_timeout(error: BaseException | None) -> bool:
    """A timeout anywhere in the chain of causes (the SDK wraps httpx's, which wraps the socket's)."""
    while error is not None:
        if isinstance(error, TimeoutError) or "Timeout" in type(error).__name__:
            return True
        error = error.__cause__ or error.__context__
    return False


def innermost(error: BaseException) -> BaseException:
    while error.__cause__ is not None:
        error = error.__cause__
    return error


def root_cause(error: BaseException) -> str:
    error = innermost(error)
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:200]}" if text else type(error).__name__


def _snippet(body: bytes) -> str:
    """The start of a body that is not what was asked for, on one line."""
    return " ".join(body.decode("utf-8", "replace").split())[:BODY_SNIPPET_CHARS]


def _error_fields(body: Any) -> tuple[str | None, str | None]:
    if not isinstance(body, dict):
        return None, None
    inner = body.get("error", body)
    if not isinstance(inner, dict) or not inner.get("message"):
        return None, None
    kind = inner.get("type")
    return (str(kind) if kind else None), str(inner["message"])
