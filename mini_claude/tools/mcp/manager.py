"""The MCP servers of a session: one event loop on a thread of its own connects them all in the
background (the prompt never waits for a server), keeps each one's state, and runs the calls the
agent makes from its own thread, where Esc or Ctrl+C cancels the call and the server is told.

`close` stops every server (a stdio server's whole process group): none outlives the session.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mini_claude.core.interrupts import stop_if_requested
from mini_claude.tools.mcp.config import ServerConfig
from mini_claude.tools.mcp.connection import ConnectOptions, ServerConnection, ServerView

if TYPE_CHECKING:
    from mcp_types import CallToolResult, GetPromptResult, ReadResourceResult

log = logging.getLogger("mini_claude")

T = TypeVar("T")
Listener = Callable[[ServerView, ServerView], None]  # (before, after) a server's state changed
WAIT_STEP_S = 0.1  # how often a waiting call looks up: a signal then lands at once
CLOSE_WAIT_S = 8.0  # for every server to stop (a stdio server gets 2 s, then SIGTERM, then SIGKILL)
CANCEL_WAIT_S = 2.0  # for a cancelled call to tell its server


class McpManager:
    def __init__(self, servers: list[ServerConfig], *, cwd: Path, connect_timeout: float) -> None:
        options = ConnectOptions(cwd, connect_timeout, self._changed)
        self._connections = {server.name: ServerConnection(server, options) for server in servers}
        self._listeners: list[Listener] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._lock = threading.Lock()
        self._ready = threading.Event()  # the loop runs
        self._closed = False

    def subscribe(self, listener: Listener) -> None:
        """Told of every change of a server's state (on the loop's thread)."""
        self._listeners.append(listener)

    @property
    def names(self) -> list[str]:
        return list(self._connections)

    def views(self) -> list[ServerView]:
        return [connection.view for connection in self._connections.values()]

    def view(self, name: str) -> ServerView | None:
        connection = self._connections.get(name)
        return connection.view if connection is not None else None

    def start(self, first: Callable[[], None] = lambda: None) -> None:
        """Connect every server in the background, once `first()` (on the servers' thread: other
        start-up work finishing) has returned; returns at once. Once; nothing to do without servers."""
        with self._lock:
            if self._thread is not None or self._closed or not self._connections:
                return
            self._thread = threading.Thread(target=self._run_loop, args=(first,), name="mcp", daemon=True)
            self._thread.start()

    def reconnect(self, name: str) -> None:
        """Stop the server if it runs and connect it again, in the background."""
        if name not in self._connections:
            raise KeyError(name)
        if self._thread is None:
            self.start()
            return
        self._ready.wait(CLOSE_WAIT_S)
        # Waited for: once this returns, the server is "connecting" (not its old state).
        self._submit(self._restart(name)).result(CLOSE_WAIT_S)

    def call_tool(self, server: str, tool: str, arguments: dict[str, Any], timeout: float) -> CallToolResult:
        return self._wait(self._connection(server).call_tool(tool, arguments, timeout))

    def read_resource(self, server: str, uri: str, timeout: float) -> ReadResourceResult:
        return self._wait(self._connection(server).read_resource(uri, timeout))

    def get_prompt(
        self, server: str, name: str, arguments: dict[str, str], timeout: float
    ) -> GetPromptResult:
        return self._wait(self._connection(server).get_prompt(name, arguments, timeout))

    def close(self) -> None:
        """Stop every server and the loop; waits (a few seconds at most) for them to go. Closed
        before the loop started (the program left at once), nothing starts."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._stop_all(), loop).result(CLOSE_WAIT_S)
        except (concurrent.futures.TimeoutError, RuntimeError):
            log.warning("mcp: servers still stopping after %s s", CLOSE_WAIT_S)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(CLOSE_WAIT_S)

    # --- on the loop's thread ----------------------------------------------------------

    def _run_loop(self, first: Callable[[], None]) -> None:
        try:
            first()
        except Exception:
            log.exception("mcp: before connecting")
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        with self._lock:
            if self._closed:  # the session ended first: nothing is started
                loop.close()
                return
            self._loop = loop
            for name in self._connections:
                self._launch(name, loop)
        loop.call_soon(self._ready.set)
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _restart(self, name: str) -> None:
        running = self._tasks.pop(name, None)
        if running is not None and not running.done():
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
        if not self._closed:
            self._launch(name, asyncio.get_running_loop())

    def _launch(self, name: str, loop: asyncio.AbstractEventLoop) -> None:
        connection = self._connections[name]
        connection.starting()
        self._tasks[name] = loop.create_task(connection.run(), name=f"mcp {name}")

    async def _stop_all(self) -> None:
        tasks = [task for task in self._tasks.values() if not task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _changed(self, before: ServerView, after: ServerView) -> None:
        for listener in self._listeners:
            try:
                listener(before, after)
            except Exception:
                log.exception("mcp: a listener failed")

    # --- the bridge ----------------------------------------------------------------------

    def _connection(self, name: str) -> ServerConnection:
        connection = self._connections.get(name)
        if connection is None:
            raise ConnectionError(f"no MCP server named {name}")
        return connection

    def _submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        if self._loop is None or self._closed:
            work.close()
            raise ConnectionError("the MCP servers are not running")
        return asyncio.run_coroutine_threadsafe(work, self._loop)

    def _wait(self, work: Coroutine[Any, Any, T]) -> T:
        """`work`'s result on the calling thread. A KeyboardInterrupt (Esc, Ctrl+C) cancels it,
        which tells the server, and is raised again."""
        future = self._submit(work)
        try:
            # Not future.result(timeout): the call's own TimeoutError would pass for the wait's.
            while not future.done():
                concurrent.futures.wait([future], WAIT_STEP_S)
                stop_if_requested()  # a sub-agent's call stops with it (Esc)
        except KeyboardInterrupt:
            future.cancel()
            concurrent.futures.wait([future], CANCEL_WAIT_S)
            raise
        return future.result()
