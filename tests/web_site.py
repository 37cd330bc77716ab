"""A real web server for web_fetch's tests: http.server on 127.0.0.1 (a free port) in a thread,
serving scripted pages, recording each request, stopped when the test ends; and the tools'
context with real permissions, where a rule allowing `localhost` is what lets a fetch reach it
(the address checks themselves stay as they are)."""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mini_claude.safety.decision import RuleSet
from mini_claude.safety.permissions import Permissions
from mini_claude.safety.rules import RuleEntry, parse_rule
from mini_claude.tools.base import ToolContext, ToolResult
from tests.tool_harness import REGISTRY, ScriptedUser

ALLOW_LOCALHOST = "WebFetch(domain:localhost)"
MAX_DRIPS = 2_000  # a dripping page stops by itself, whoever forgets it
JOIN_SECONDS = 5.0
POLL_SECONDS = 0.05  # how soon the server notices it is to stop


@dataclass
class Page:
    """What one path answers: a status, headers and a body (bytes, or pieces made as they are
    sent: a page larger than memory), or `raw` bytes instead of all of it (a server that is not
    quite HTTP)."""

    body: bytes | Callable[[], Iterable[bytes]] = b""
    status: int = 200
    headers: list[tuple[str, str]] = field(
        default_factory=lambda: [("Content-Type", "text/html; charset=utf-8")]
    )
    raw: bytes | None = None
    drip_seconds: float = 0.0  # between pieces of the body
    sent: int = 0  # bytes of the body that went out


def endless(piece: bytes) -> Callable[[], Iterator[bytes]]:
    """A body that goes on for as long as someone reads it (100 MB at most)."""

    def pieces() -> Iterator[bytes]:
        for _ in range(100 * 2**20 // len(piece)):
            yield piece

    return pieces


class WebSite:
    """Scripted pages on 127.0.0.1; `requests` holds (path, headers) of each request received."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        """`tls`: served over https with this (server-side) context."""
        self.pages: dict[str, Page] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.scheme = "https" if tls is not None else "http"
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(POLL_SECONDS,), daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str = "/", host: str = "localhost") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def serve(self, path: str, page: Page | bytes | str, content_type: str | None = None) -> Page:
        if not isinstance(page, Page):
            body = page.encode() if isinstance(page, str) else page
            page = Page(body, headers=[("Content-Type", content_type or "text/html; charset=utf-8")])
        self.pages[path] = page
        return page

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.pages[path] = Page(status=status, headers=[("Location", location)])

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(JOIN_SECONDS)


def _handler(site: WebSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            page = site.pages.get(self.path, Page(b"no such page", 404, [("Content-Type", "text/plain")]))
            if page.raw is not None:
                self.wfile.write(page.raw)
                return
            self.send_response(page.status)
            for name, value in page.headers:
                self.send_header(name, value)
            if isinstance(page.body, bytes):
                self.send_header("Content-Length", str(len(page.body)))
            self.end_headers()
            pieces = [page.body] if isinstance(page.body, bytes) else page.body()
            try:
                for count, piece in enumerate(pieces):
                    if count >= MAX_DRIPS and page.drip_seconds:
                        break
                    self.wfile.write(piece)
                    self.wfile.flush()
                    page.sent += len(piece)
                    time.sleep(page.drip_seconds)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the reader went away: what a capped read does

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def site() -> Iterator[WebSite]:
    server = WebSite()
    yield server
    server.close()


def fetch_context(
    project: Path, *allowed: str, answers: Iterable[str] = (), mode: str = "ask", denied: Iterable[str] = ()
) -> tuple[ToolContext, ScriptedUser]:
    """The tools' context for `project`: real permissions with these allow and deny rules (as a
    settings file would give them), and a scripted user at the question."""
    user = ScriptedUser(*answers)
    entries = [RuleEntry(text, "allow", "settings.json", project) for text in allowed]
    entries += [RuleEntry(text, "deny", "settings.json", project) for text in denied]
    rules = RuleSet([parse_rule(entry, project) for entry in entries])
    return ToolContext(project.resolve(), Permissions(project, mode=mode, ask=user, rules=rules)), user


def web_fetch(ctx: ToolContext, url: str, prompt: str | None = None) -> ToolResult:
    tool_input = {"url": url} if prompt is None else {"url": url, "prompt": prompt}
    return REGISTRY.run("web_fetch", tool_input, ctx)


def loopback_alias() -> str | None:
    """A name other than localhost that /etc/hosts gives a loopback address (no DNS is asked)."""
    try:
        lines = Path("/etc/hosts").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split("#")[0].split()
        if fields and fields[0].startswith("127."):
            names = [name for name in fields[1:] if "localhost" not in name]
            if names:
                return names[0]
    return None
