"""MCP servers written with the SDK's MCPServer (`servers.py`), and starting them for tests:
their command lines, a user configuration naming them, an HTTP one on a free port, and the
check that none is left running. Under pytest they are forked from a warm server (`warm.py`)."""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.mcp_kit.warm import WARM_SERVERS, WarmServers
from tests.warm_client import ALL_COLD

SERVERS = str(Path(__file__).resolve().parent / "servers.py")
STARTUP_TIMEOUT = 30.0
UNDER_PYTEST = "PYTEST_CURRENT_TEST"


def server_command(kind: str, *extra: str) -> dict[str, Any]:
    """A stdio entry running the test server `kind`; `extra` words (a marker) follow it."""
    if UNDER_PYTEST in os.environ:  # elsewhere (the bench) servers start cold, as users' do
        share_warm_servers()
    return {"command": sys.executable, "args": [SERVERS, kind, *extra]}


def write_user_servers(home: Path, servers: dict[str, Any]) -> Path:
    path = home / ".mini-claude" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


@contextmanager
def http_server(kind: str, *, sse: bool = False, env: dict[str, str] | None = None) -> Iterator[str]:
    """The test server `kind` over streamable HTTP (or SSE) on 127.0.0.1: yields its URL."""
    flag = "--sse" if sse else "--http"
    if UNDER_PYTEST in os.environ:
        share_warm_servers()
    process = subprocess.Popen(
        [sys.executable, SERVERS, kind, flag], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, env={**os.environ, **(env or {})},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT "), f"the server said {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}/{'sse' if sse else 'mcp'}"
    finally:
        process.terminate()
        process.wait(10)


_warm: WarmServers | None = None


def share_warm_servers() -> None:
    """Launch the warm server the test servers fork from, once, unless one is shared already (or
    every start is to be cold: MINI_CLAUDE_TEST_COLD=1). pytest-xdist's controller launches it for
    its workers (conftest); a single pytest process, on first use."""
    global _warm
    if _warm is None and WARM_SERVERS not in os.environ and not ALL_COLD:
        _warm = WarmServers()
        atexit.register(stop_warm_servers)


def stop_warm_servers() -> None:
    global _warm
    if _warm is not None:
        _warm.stop()
        _warm = None


def processes_with(marker: str) -> list[int]:
    """The processes whose command line holds `marker` (zombies and this one left out)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().decode("utf-8", "replace")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state not in ("Z", "X"):
            found.append(int(entry))
    return found
