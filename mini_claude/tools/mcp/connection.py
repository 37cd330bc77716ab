"""One MCP server's connection, on the manager's event loop: connect (within a time limit), list
what it offers (tools, prompts, resources), stay connected until it goes or is stopped, and
answer calls meanwhile. Its state and what it offers are read as a snapshot from any thread."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mini_claude import __version__
from mini_claude.core.untrusted import visible_text
from mini_claude.tools.mcp.config import ServerConfig
from mini_claude.tools.mcp.transports import StderrLog, WatchedTransport

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult, GetPromptResult, ReadResourceResult

log = logging.getLogger("mini_claude")

State = Literal["connecting", "connected", "failed", "stopped"]
MAX_PAGES = 50  # of one listing: a server that pages forever cannot hold the connection up
MAX_LISTED = 2_000  # tools (or prompts, resources) kept of one server
ERROR_CHARS = 300


@dataclass(frozen=True)
class ServerView:
    """What is known of one server now."""

    config: ServerConfig
    state: State = "connecting"
    error: str = ""  # why it failed: one line, made visible
    tools: tuple[Any, ...] = ()  # mcp_types.Tool
    prompts: tuple[Any, ...] = ()  # mcp_types.Prompt
    resources: tuple[Any, ...] = ()  # mcp_types.Resource
    server_version: str = ""

    @property
    def name(self) -> str:
        return self.config.name


@dataclass
class ConnectOptions:
    cwd: Path
    connect_timeout: float
    on_change: Callable[[ServerView, ServerView], None] = field(default=lambda old, new: None)


class ServerConnection:
    def __init__(self, config: ServerConfig, options: ConnectOptions) -> None:
        self.options = options
        self.view = ServerView(config)
        self._client: Client | None = None

    def starting(self) -> None:
        """A connection is about to start: the view says so at once."""
        self._set(ServerView(self.view.config))

    async def run(self) -> None:
        """Connect and stay connected until the server goes or the task is cancelled; never raises
        (but for cancellation): the view says how it ended."""
        stderr = StderrLog(self.view.name) if self.view.config.transport == "stdio" else None
        try:
            await self._connected_until_gone(stderr)
            gone = "the server exited" if stderr is not None else "the server closed the connection"
            self._fail(gone, stderr)
        except asyncio.CancelledError:
            self._set(replace(self.view, state="stopped", tools=(), prompts=(), resources=()))
            raise
        except Exception as error:  # whatever the SDK or the server did: one line, never a crash
            log.info("mcp server %s failed", self.view.name, exc_info=True)
            self._fail(describe_error(error, self.view.config), stderr)
        finally:
            self._client = None
            if stderr is not None:
                stderr.close()

    async def _connected_until_gone(self, stderr: StderrLog | None) -> None:
        from mcp import Client
        from mcp_types import Implementation

        transport = WatchedTransport(self.view.config, self.options.cwd, stderr)
        client = Client(
            transport, client_info=Implementation(name="mini-claude", version=__version__),
            message_handler=self._on_message, cache=None,
        )  # fmt: skip
        limit = self.options.connect_timeout
        # asyncio.timeout, not wait_for: the client is entered and left in this one task.
        try:
            async with asyncio.timeout(limit):
                await client.__aenter__()
        except TimeoutError:
            raise TimeoutError(f"no answer within {limit:g} s (MINI_CLAUDE_MCP_TIMEOUT)") from None
        try:
            if stderr is not None:
                stderr.close_writer()
            self._client = client
            try:
                async with asyncio.timeout(limit):
                    await self._refresh(client)
            except TimeoutError:
                raise TimeoutError(f"listing its tools took over {limit:g} s") from None
            await transport.ended.wait()
        finally:
            self._client = None
            await client.__aexit__(None, None, None)

    async def _refresh(self, client: Client) -> None:
        capabilities = client.server_capabilities
        tools = await _listed(lambda cursor: client.list_tools(cursor=cursor), "tools")
        prompts = (
            await _listed(lambda c: client.list_prompts(cursor=c), "prompts") if capabilities.prompts else []
        )
        resources = (
            await _listed(lambda c: client.list_resources(cursor=c), "resources")
            if capabilities.resources
            else []
        )
        info = client.server_info
        self._set(
            replace(
                self.view, state="connected", error="", tools=tuple(tools), prompts=tuple(prompts),
                resources=tuple(resources), server_version=visible_text(info.version or "") if info else "",
            )
        )  # fmt: skip

    async def _on_message(self, message: object) -> None:
        from mcp_types import (
            PromptListChangedNotification,
            ResourceListChangedNotification,
            ToolListChangedNotification,
        )

        changed = (
            ToolListChangedNotification,
            PromptListChangedNotification,
            ResourceListChangedNotification,
        )
        if isinstance(message, changed) and self._client is not None:
            try:
                await self._refresh(self._client)
            except Exception:
                log.info("mcp server %s: listing again failed", self.view.name, exc_info=True)

    # --- calls, from the manager -------------------------------------------------------

    async def call_tool(self, tool: str, arguments: dict[str, Any], timeout: float) -> CallToolResult:
        client = self._connected()
        async with asyncio.timeout(timeout):
            return await client.call_tool(tool, arguments)

    async def read_resource(self, uri: str, timeout: float) -> ReadResourceResult:
        client = self._connected()
        async with asyncio.timeout(timeout):
            return await client.read_resource(uri)

    async def get_prompt(self, name: str, arguments: dict[str, str], timeout: float) -> GetPromptResult:
        client = self._connected()
        async with asyncio.timeout(timeout):
            return await client.get_prompt(name, arguments)

    def _connected(self) -> Client:
        if self._client is None or self.view.state != "connected":
            raise ConnectionError(f"MCP server {self.view.name} is not connected ({self.view.state})")
        return self._client

    def _fail(self, reason: str, stderr: StderrLog | None) -> None:
        said = stderr.last_line() if stderr is not None else ""
        if said and said not in reason:
            reason = f"{reason}; it said: {said}"
        shown = visible_text(reason)
        shown = shown if len(shown) <= ERROR_CHARS else shown[: ERROR_CHARS - 1] + "…"
        self._set(replace(self.view, state="failed", error=shown, tools=(), prompts=(), resources=()))

    def _set(self, view: ServerView) -> None:
        """Listeners first (the tools are built), then the view: whoever sees a server connected
        finds its tools."""
        try:
            self.options.on_change(self.view, view)
        except Exception:  # what listens must not end the connection
            log.exception("mcp server %s: a listener failed", view.name)
        self.view = view


async def _listed(page: Callable[[str | None], Awaitable[Any]], kind: str) -> list[Any]:
    """Every item of a paginated listing, up to MAX_LISTED over at most MAX_PAGES pages."""
    found: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        result = await page(cursor)
        found.extend(getattr(result, kind))
        cursor = result.next_cursor
        if not cursor or len(found) >= MAX_LISTED:
            break
    return found[:MAX_LISTED]


def describe_error(error: BaseException, config: ServerConfig) -> str:
    """One line saying why a server could not be reached or used."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, FileNotFoundError) and config.transport == "stdio":
        return f"command not found: {config.command}"
    if isinstance(error, PermissionError) and config.transport == "stdio":
        return f"command not allowed to run: {config.command}"
    kind = type(error).__name__
    response = getattr(error, "response", None)
    status = getattr(response, "status_code", None)
    if status is not None:
        return f"HTTP {status} from {config.url}"
    if kind in ("ConnectError", "ConnectTimeout"):
        return f"could not connect to {config.url}"
    message = str(error).strip() or kind
    return message if kind in ("TimeoutError", "MCPError", "ConnectionError") else f"{kind}: {message}"
