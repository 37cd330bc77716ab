"""How one MCP server is reached: a command over stdio, streamable HTTP, or SSE (the SDK's
transports), watched so that a server that exits or hangs up is noticed while idle, with a stdio
server's stderr going to the debug log (its last lines kept for the error the user sees)."""

from __future__ import annotations

import asyncio
import collections
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mini_claude.tools.mcp.config import ServerConfig

if TYPE_CHECKING:
    from mcp.client import Transport

log = logging.getLogger("mini_claude")

# The model server's credentials are not handed to every tool server: a server that needs one
# names it in its `env` (`"ANTHROPIC_API_KEY": "${ANTHROPIC_API_KEY}"`).
WITHHELD_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
STDERR_LINES_KEPT = 5
STDERR_LINE_CHARS = 500
READ_BYTES = 65_536
HTTP_TIMEOUT_S = 30.0  # connecting and sending; a response stream may stay open longer
HTTP_READ_TIMEOUT_S = 300.0


def server_environment(config: ServerConfig) -> dict[str, str]:
    """A stdio server's environment: ours (as Claude Code does, so `npx`, proxies and the like
    work) less the model server's credentials, then the entry's `env`."""
    inherited = {key: value for key, value in os.environ.items() if key not in WITHHELD_VARIABLES}
    return {**inherited, **config.env}


class StderrLog:
    """A pipe for a stdio server's stderr, read on the event loop: each line to the debug log,
    the last few kept (a server that fails usually says why there)."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._read, write = os.pipe()
        os.set_blocking(self._read, False)
        self.writer: TextIO = os.fdopen(write, "w", encoding="utf-8", errors="replace")
        self.last_lines: collections.deque[str] = collections.deque(maxlen=STDERR_LINES_KEPT)
        self._partial = b""
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._read, self._on_readable)

    def close_writer(self) -> None:
        """The server holds its own copy now: ours would keep the pipe open after it exits."""
        if not self.writer.closed:
            self.writer.close()

    def close(self) -> None:
        self.close_writer()
        if self._read >= 0:
            self._loop.remove_reader(self._read)
            self._on_readable(final=True)
            os.close(self._read)
            self._read = -1

    def last_line(self) -> str:
        return self.last_lines[-1] if self.last_lines else ""

    def _on_readable(self, final: bool = False) -> None:
        try:
            chunk = os.read(self._read, READ_BYTES)
        except (BlockingIOError, InterruptedError):
            chunk = b""
        except OSError:
            chunk, final = b"", True
        if not chunk and not final and self._read >= 0:
            self._loop.remove_reader(self._read)  # end of file: every writer has gone
        lines = (self._partial + chunk).split(b"\n")
        self._partial = b"" if final else lines.pop()
        for raw in lines:
            line = raw.decode("utf-8", "replace").rstrip("\r")[:STDERR_LINE_CHARS]
            if line.strip():
                self.last_lines.append(line)
                log.info("mcp server %s stderr: %s", self.server, line)


class WatchedTransport:
    """The SDK's transport for `config`, whose read stream sets `ended` once the server has
    gone (its stdout closed, the HTTP stream ended): the connection ends at once, not at the
    next call."""

    def __init__(self, config: ServerConfig, cwd: Path, stderr: StderrLog | None) -> None:
        self.config, self.cwd, self.stderr = config, cwd, stderr
        self.ended = asyncio.Event()
        self._context: Any = None

    async def __aenter__(self) -> Any:
        self._context = _transport(self.config, self.cwd, self.stderr)
        read_stream, write_stream = await self._context.__aenter__()
        return _WatchedReadStream(read_stream, self.ended), write_stream

    async def __aexit__(self, *exc: object) -> bool | None:
        self.ended.set()
        result: bool | None = await self._context.__aexit__(*exc)
        return result


def _transport(config: ServerConfig, cwd: Path, stderr: StderrLog | None) -> Transport:
    if config.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        assert stderr is not None
        parameters = StdioServerParameters(
            command=config.command, args=list(config.args), env=server_environment(config), cwd=cwd,
            encoding_error_handler="replace",
        )  # fmt: skip
        return stdio_client(parameters, errlog=stderr.writer)
    if config.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(
            config.url,
            headers=dict(config.headers),
            timeout=HTTP_TIMEOUT_S,
            sse_read_timeout=HTTP_READ_TIMEOUT_S,
        )
    return _streamable_http(config)


@asynccontextmanager
async def _streamable_http(config: ServerConfig) -> AsyncIterator[Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(HTTP_TIMEOUT_S, read=HTTP_READ_TIMEOUT_S)
    async with (
        httpx2.AsyncClient(headers=dict(config.headers), timeout=timeout) as client,
        streamable_http_client(config.url, http_client=client) as streams,
    ):
        yield streams


class _WatchedReadStream:
    """The transport's read stream as the session reads it, telling `ended` when it ends."""

    def __init__(self, stream: Any, ended: asyncio.Event) -> None:
        self._stream, self._ended = stream, ended

    def __getattr__(self, name: str) -> Any:  # `last_context` and what else the SDK may ask
        return getattr(self._stream, name)

    async def receive(self) -> Any:
        try:
            return await self._stream.receive()
        except BaseException:
            self._ended.set()
            raise

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._stream.__anext__()
        except BaseException:
            self._ended.set()
            raise

    async def aclose(self) -> None:
        self._ended.set()
        await self._stream.aclose()

    async def __aenter__(self) -> _WatchedReadStream:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        self._ended.set()
        result: bool | None = await self._stream.__aexit__(*exc)
        return result
