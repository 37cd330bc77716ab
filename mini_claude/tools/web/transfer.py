"""One HTTP GET to an address already checked: the connection goes to that very address (so a DNS
answer that changes between the check and the connection changes nothing), the Host header and
TLS (SNI and the certificate check) name the host; no proxy; the body is read up to a byte cap
(gzip and deflate undone within it) and the whole request ends at a deadline, however slowly
the server drips its answer (then TimeoutError, which the caller words)."""

from __future__ import annotations

import contextlib
import functools
import http.client
import os
import socket
import ssl
import threading
import time
import zlib
from dataclasses import dataclass

from mini_claude import __version__
from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.untrusted import attribute
from mini_claude.tools.web.address import IP, Target

MAX_BODY_BYTES = 5 * 2**20  # read no further: a 100 MB page is never held whole
CONNECT_TIMEOUT_S = 10.0
READ_CHUNK_BYTES = 64 * 1024
MAX_PROBLEM_CHARS = 200  # of an error's own words, quoted in the one line the model reads
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_GZIP_OR_ZLIB = 32 + zlib.MAX_WBITS  # zlib reads either header
_DECODED = ("gzip", "x-gzip", "deflate")
REQUEST_HEADERS = {
    "User-Agent": f"mini-claude/{__version__} (web_fetch)",
    "Accept": "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,*/*;q=0.5",
    "Accept-Encoding": ", ".join(_DECODED[::2]),
    "Connection": "close",
}


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    headers: http.client.HTTPMessage
    body: bytes  # empty for a redirect
    cut: bool  # the body went on past MAX_BODY_BYTES


def get(target: Target, addresses: list[IP], deadline: float) -> Response:
    """GET `target` from the first of `addresses` that answers, by `deadline` (monotonic)."""
    connection, watchdog = _connect(target, addresses, deadline)
    try:
        connection.request("GET", target.path, headers=REQUEST_HEADERS)
        response = connection.getresponse()
        body, cut = b"", False
        if response.status not in REDIRECT_STATUSES:
            body, cut = _read_body(response, target)
    except (OSError, http.client.HTTPException) as error:
        if watchdog.fired:
            raise TimeoutError from None
        raise ToolError(_failure(target, error)) from None
    finally:
        watchdog.stop()
        connection.close()
    if watchdog.fired:  # a body that ends when the connection does looked complete
        raise TimeoutError
    return Response(response.status, response.reason, response.headers, body, cut)


def _connect(
    target: Target, addresses: list[IP], deadline: float
) -> tuple[http.client.HTTPConnection, _Watchdog]:
    """A connection made to one of `addresses`, in order, and the watchdog cutting it at `deadline`."""
    problems: list[str] = []
    for address in addresses:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            sock = socket.create_connection((str(address), target.port), min(CONNECT_TIMEOUT_S, left))
        except OSError as error:
            problems.append(f"{address}: {attribute(_reason(error))}")
            continue
        watchdog: _Watchdog | None = None
        try:
            watchdog = _Watchdog(sock, deadline - time.monotonic())
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            return _opened(target, sock), watchdog
        except OSError as error:  # ssl.SSLError among them
            sock.close()
            if watchdog is not None:
                watchdog.stop()
                if watchdog.fired:
                    raise TimeoutError from None
            raise ToolError(_failure(target, error)) from None
    if not problems:
        raise TimeoutError
    raise ToolError(prompts.notice("web_connect_failed", host=target.host, problems="; ".join(problems)))


def _opened(target: Target, sock: socket.socket) -> http.client.HTTPConnection:
    """An http.client connection over `sock`; for https, TLS with the host name (SNI and the
    certificate's name), checked against the system's trust store."""
    if target.scheme == "https":
        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            target.host, target.port, context=_tls_context()
        )
        connection.sock = _tls_context().wrap_socket(sock, server_hostname=target.host)
    else:
        connection = http.client.HTTPConnection(target.host, target.port)
        connection.sock = sock  # connected already: http.client uses it as it is
    return connection


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The system's trust store, as browsers use it (truststore: the OS's own checks on macOS and
    Windows, its CA files on Linux); hostname checking and certificate verification on."""
    import truststore

    return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _read_body(response: http.client.HTTPResponse, target: Target) -> tuple[bytes, bool]:
    """The body, content-decoded, up to MAX_BODY_BYTES (more is left unread), and whether it went on."""
    encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
    if encoding not in ("identity", "", *_DECODED):
        raise ToolError(prompts.notice("web_encoding_unknown", url=target.url, encoding=attribute(encoding)))
    inflate = zlib.decompressobj(_GZIP_OR_ZLIB) if encoding in _DECODED else None
    parts: list[bytes] = []
    size = raw = 0
    while chunk := response.read1(READ_CHUNK_BYTES):
        raw += len(chunk)
        more = False
        if inflate is not None:
            try:  # one byte past the cap at most: enough to know the page goes on
                chunk = inflate.decompress(chunk, MAX_BODY_BYTES - size + 1)
            except zlib.error as error:
                raise ToolError(
                    prompts.notice("web_encoding_broken", url=target.url, problem=error)
                ) from None
            more = bool(inflate.unconsumed_tail)
        parts.append(chunk)
        size += len(chunk)
        if more or size > MAX_BODY_BYTES or raw > MAX_BODY_BYTES:
            return b"".join(parts)[:MAX_BODY_BYTES], True
    if response.length:  # read1 takes a connection closed early for the end of the body
        raise http.client.IncompleteRead(b"", response.length)
    return b"".join(parts), False


class _Watchdog:
    """Shuts the connection at the deadline: socket timeouts bound each read, not their sum, and a
    server sending a byte a second would never time out. A duplicate of the socket is shut, which
    wakes a read blocked on the original (plain or TLS) with end of file."""

    def __init__(self, sock: socket.socket, seconds: float) -> None:
        self.fired = False
        self._lock = threading.Lock()
        self._cutter: socket.socket | None = socket.socket(fileno=os.dup(sock.fileno()))
        self._timer = threading.Timer(max(seconds, 0.0), self._cut)
        self._timer.daemon = True
        self._timer.start()

    def _cut(self) -> None:
        with self._lock:
            if self._cutter is not None:
                self.fired = True
                with contextlib.suppress(OSError):
                    self._cutter.shutdown(socket.SHUT_RDWR)

    def stop(self) -> None:
        self._timer.cancel()
        with self._lock:
            if self._cutter is not None:
                self._cutter.close()
                self._cutter = None


def _failure(target: Target, error: BaseException) -> str:
    """One line for a failed request; what the server sent, quoted in it, is made inert."""
    if isinstance(error, ssl.SSLCertVerificationError):
        problem = error.verify_message or _reason(error)
        return prompts.notice("web_certificate", host=target.host, problem=attribute(problem))
    if isinstance(error, http.client.IncompleteRead):
        return prompts.notice("web_incomplete", host=target.host)
    if isinstance(error, http.client.HTTPException) and not isinstance(error, http.client.RemoteDisconnected):
        problem = f"{type(error).__name__}: {error}"[:MAX_PROBLEM_CHARS]
        return prompts.notice("web_not_http", host=target.host, problem=attribute(problem))
    return prompts.notice("web_transfer_failed", host=target.host, problem=attribute(_reason(error)))


def _reason(error: BaseException) -> str:
    if isinstance(error, TimeoutError):  # socket.timeout is TimeoutError
        return "timed out"
    return (getattr(error, "strerror", None) or str(error) or type(error).__name__)[:MAX_PROBLEM_CHARS]
