"""The web_fetch tool: one web page read for the model, each hop of its redirects judged before
anything is sent to it (the address, the permission for its domain, every address its name
resolves to), and the text handed back as untrusted content, or, with a prompt, the side model's
answer about it."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from typing import TypeVar
from urllib.parse import urljoin

from mini_claude.core import prompts
from mini_claude.core.errors import PermissionDenied, ToolError
from mini_claude.core.untrusted import attribute, visible_lines, wrap
from mini_claude.llm.model_errors import ModelError
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.web.address import IP, Target, blocked_name, parse_target, resolve, why_not_public
from mini_claude.tools.web.page import PageText, page_text
from mini_claude.tools.web.transfer import MAX_BODY_BYTES, REDIRECT_STATUSES, Response, get

TOOL = "web_fetch"
TOTAL_TIMEOUT_S = 30.0  # the network's time for one call, redirects included (not a question's wait)
MAX_REDIRECTS = 5
MAX_RESULT_CHARS = 100_000  # of the page's text, for the model (without a prompt)
MAX_PROMPTED_CHARS = 200_000  # of the page's text, for the side model (with a prompt)
ERROR_PAGE_CHARS = 2_000  # of an error page (a 404's), quoted with the error
MAX_REASON_CHARS = 100  # of the server's status phrase
ANSWER_MAX_TOKENS = 2_000
ANSWER_TIMEOUT_S = 60.0
PAGE_TAG = "web-page"
ANSWER_TAG = "web-page-answer"
T = TypeVar("T")
# What web_fetch's definition (prompts/tools.toml) quotes, filled in by the registry.
DESCRIBED_LIMITS = {
    "max_redirects": MAX_REDIRECTS,
    "max_page_mb": MAX_BODY_BYTES // 2**20,
    "max_page_chars": f"{MAX_RESULT_CHARS:,}",
    "fetch_seconds": f"{TOTAL_TIMEOUT_S:g}",
}


def web_fetch(ctx: ToolContext, url: str, prompt: str | None = None) -> ToolResult:
    target = parse_target(url)
    clock = _Clock(TOTAL_TIMEOUT_S)
    allowed: set[str] = set()  # hosts this call may fetch from: one question per host
    hops: list[str] = []
    while True:
        with _hop(hops, target.url):
            addresses = _admitted(ctx, target, clock, allowed)
        response = clock.run(target, functools.partial(get, target, addresses))
        if response.status not in REDIRECT_STATUSES:
            break
        location = _redirected(target, response, hops)
        with _hop(hops, attribute(location)):
            target = parse_target(location)
    return _result(ctx, target, response, hops, (prompt or "").strip())


@contextlib.contextmanager
def _hop(hops: list[str], url: str) -> Iterator[None]:
    """A refusal on a redirect's hop names the way it came, under its reason (the user's line)."""
    try:
        yield
    except PermissionDenied:
        raise
    except ToolError as problem:
        if not hops:
            raise
        chain = prompts.notice("web_redirected", chain=" → ".join([*hops, url]))
        raise ToolError(f"{problem}\n{chain}") from None


def _admitted(ctx: ToolContext, target: Target, clock: _Clock, allowed: set[str]) -> list[IP]:
    """The addresses `target` may be fetched from, once its domain is allowed (asked when no rule
    says); ToolError or PermissionDenied when it may not be. Nothing is looked up before the
    question: the name itself would tell a DNS server what is being fetched."""
    # Only an allow rule in effect before the question opens a private or local address: a "yes"
    # (or "always") given to a name must not reach what the name turns out to lead to.
    opened = ctx.permissions.rules.allows_domain(target.names) is not None
    known = why_not_public(target.literal) if target.literal is not None else blocked_name(target.host)
    if known is not None and not opened:
        raise ToolError(_refusal(target, known, target.literal))
    if target.host not in allowed:
        ctx.permissions.check_fetch(TOOL, target.url, target.names)
        allowed.add(target.host)
    if target.literal is not None:
        return [target.literal]
    addresses = clock.run(
        target, lambda deadline: resolve(target.host, target.port, deadline - time.monotonic())
    )
    if not opened:  # every address the name has: the next connection may pick any of them
        for address in addresses:
            reason = why_not_public(address)
            if reason is not None:
                raise ToolError(_refusal(target, reason, address))
    return addresses


def _refusal(target: Target, reason: str, address: IP | None) -> str:
    where = prompts.notice(reason)
    at = f" ({address})" if address is not None and str(address) != target.host else ""
    return prompts.notice("web_address_refused", host=target.host, at=at, where=where)


def _redirected(target: Target, response: Response, hops: list[str]) -> str:
    """Where a redirect leads (absolute), counted as a hop; it is judged as the first address was."""
    location = (response.headers.get("Location") or "").strip()
    if not location:
        raise ToolError(prompts.notice("web_redirect_nowhere", url=target.url, status=response.status))
    if len(hops) >= MAX_REDIRECTS:
        raise ToolError(prompts.notice("web_redirect_limit", url=target.url, max=MAX_REDIRECTS))
    hops.append(target.url)
    return urljoin(target.url, location)


def _result(ctx: ToolContext, target: Target, response: Response, hops: list[str], prompt: str) -> ToolResult:
    status = f"{response.status} {response.reason[:MAX_REASON_CHARS]}".strip()  # quoted where it is shown
    if not 200 <= response.status < 300:
        raise ToolError(_error_page(target, response, status))
    page = page_text(response.body, response.headers, response.cut, target.url)
    notes = [prompts.notice("web_redirected", chain=" → ".join([*hops, target.url]))] if hops else []
    if response.cut:
        notes.append(prompts.notice("web_body_cut", max_mb=MAX_BODY_BYTES // 2**20))
    notes.extend(page.warnings)
    size = _size(len(response.body)) + (" (cut)" if response.cut else "")
    detail = (*([f"redirected to {target.url}"] if hops else []), *page.warnings)
    if prompt and ctx.side_model is not None:
        answer = visible_lines(_answer(ctx, page, prompt, target.url))
        body = wrap(ANSWER_TAG, answer, url=target.url)
        return ToolResult("\n".join([*notes, body]), f"answered from {size} of {page.kind}", detail=detail)
    if prompt:
        notes.append(prompts.notice("web_no_side_model"))
    # Escape codes and invisible characters written out (a page has no use for them), on what is
    # kept only: a page of 5 MB of control characters is not made visible whole.
    text = visible_lines(page.text[:MAX_RESULT_CHARS])[:MAX_RESULT_CHARS]
    if len(page.text) > MAX_RESULT_CHARS:
        notes.append(
            prompts.notice("web_text_cut", shown=f"{MAX_RESULT_CHARS:,}", total=f"{len(page.text):,}")
        )
    body = wrap(PAGE_TAG, text, url=target.url, status=status)
    return ToolResult("\n".join([*notes, body]), f"{size} of {page.kind}", detail=detail)


def _error_page(target: Target, response: Response, status: str) -> str:
    """The error for a status other than 2xx, with the start of the page that came with it."""
    message = prompts.notice("web_status", url=target.url, status=attribute(status))
    try:
        text = page_text(response.body, response.headers, response.cut, target.url).text.strip()
    except ToolError:  # a binary error page: the status says enough
        text = ""
    text = visible_lines(text[:ERROR_PAGE_CHARS])
    return f"{message}\n{wrap(PAGE_TAG, text, url=target.url, status=status)}" if text else message


def _answer(ctx: ToolContext, page: PageText, prompt: str, url: str) -> str:
    """The side model's answer to `prompt` about the page (its first MAX_PROMPTED_CHARS)."""
    assert ctx.side_model is not None
    text = page.text[:MAX_PROMPTED_CHARS]
    cut = prompts.notice("web_prompt_page_cut", shown=f"{len(text):,}", total=f"{len(page.text):,}")
    user = prompts.render(
        "web_fetch_user.md",
        page=wrap(PAGE_TAG, text, url=url),
        cut=cut if len(page.text) > len(text) else "",
        request=wrap("request", prompt),
    )
    try:
        answer = ctx.side_model.side_query(
            system=prompts.render("web_fetch.md"), user=user, max_tokens=ANSWER_MAX_TOKENS,
            timeout=ANSWER_TIMEOUT_S, purpose="web",
        )  # fmt: skip
    except ModelError as error:
        raise ToolError(prompts.notice("web_side_model_failed", url=url, problem=error)) from None
    return answer.strip() or prompts.notice("web_side_model_empty")


class _Clock:
    """The time the network may take for one call, redirects included; the time a question
    waits for the user is not counted."""

    def __init__(self, seconds: float) -> None:
        self.left = seconds

    def run(self, target: Target, work: Callable[[float], T]) -> T:
        """`work(deadline)`, charged for the time it takes; its TimeoutError is the call's."""
        start = time.monotonic()
        try:
            if self.left <= 0:
                raise TimeoutError
            return work(start + self.left)
        except TimeoutError:
            raise ToolError(
                prompts.notice("web_too_slow", host=target.host, seconds=f"{TOTAL_TIMEOUT_S:g}")
            ) from None
        finally:
            self.left -= time.monotonic() - start


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 2**20:
        return f"{count / 1024:.0f} KB"
    return f"{count / 2**20:.1f} MB".replace(".0 MB", " MB")
