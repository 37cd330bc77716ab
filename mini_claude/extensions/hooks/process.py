"""Running one hook command: `bash -c COMMAND` in the project folder, the event as JSON on its
stdin, stdout and stderr read apart (each capped), a deadline.

Each hook runs in its own process group, and the whole group is ended when the hook exits, times
out, or the session ends (`HookProcesses.close`): a hook that starts `sleep 1000 &` leaves nothing
behind, and a child holding the pipes open cannot make us wait past the hook's own exit. A child
that leaves the group on purpose (`setsid`, a detaching daemon) is not followed (docs say so).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mini_claude.tools.shell import kill_group

OUTPUT_KEEP_BYTES = 256 * 1024  # of stdout and of stderr each; the rest is read and dropped
READ_CHUNK_BYTES = 64 * 1024
WRITE_CHUNK_BYTES = 64 * 1024
POLL_INTERVAL_S = 0.05
DRAIN_AFTER_EXIT_S = 0.5  # read this long after the hook exits, for output still in its pipes


@dataclass(frozen=True)
class HookRun:
    exit_code: int | None  # None: it did not finish (timed out, or could not start)
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str | None = None  # why it could not start


class HookProcesses:
    """Every hook process running now, so that none outlives the session."""

    def __init__(self) -> None:
        self._live: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._closed = False

    def run(
        self, command: str, stdin: bytes, cwd: Path, env: Mapping[str, str], timeout: float,
        batch: set[subprocess.Popen[bytes]] | None = None,
    ) -> HookRun:  # fmt: skip
        """Run one hook to its end, its deadline or the session's (`batch` collects its process,
        for `kill`: the hooks of one event, stopped by Ctrl+C)."""
        shell = shutil.which("bash") or "/bin/sh"
        try:
            proc = subprocess.Popen(
                [shell, "-c", command], cwd=cwd, env=dict(env), start_new_session=True,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip
        except OSError as error:
            return HookRun(None, "", "", error=f"{shell}: {error.strerror or error}")
        with self._lock:
            self._live.add(proc)
            if batch is not None:
                batch.add(proc)
            closed = self._closed
        try:
            if closed:  # the session ended while this one was starting
                return HookRun(None, "", "", error="the session ended")
            return _pump(proc, stdin, time.monotonic() + timeout)
        finally:
            kill_group(proc)  # its children too, whether it exited, timed out or was interrupted
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
            with self._lock:
                self._live.discard(proc)

    def kill(self, batch: set[subprocess.Popen[bytes]]) -> None:
        """End the hooks of `batch` still running, each whole group."""
        with self._lock:
            live = [proc for proc in batch if proc in self._live]
        for proc in live:
            kill_group(proc)

    def close(self) -> None:
        """End every hook still running (each whole group), and any that starts from now on."""
        with self._lock:
            self._closed = True
            live = list(self._live)
        for proc in live:
            kill_group(proc)


def _pump(proc: subprocess.Popen[bytes], data: bytes, deadline: float) -> HookRun:
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    outputs = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        for fd in outputs:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        if data:
            os.set_blocking(proc.stdin.fileno(), False)
            selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        written = 0
        while selector.get_map():
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now >= exited_at + DRAIN_AFTER_EXIT_S:
                break  # a child it left holds the pipes: it is ended with the group
            if now >= deadline:
                return HookRun(None, _text(outputs[proc.stdout.fileno()]), "", timed_out=True)
            for key, _ in selector.select(min(POLL_INTERVAL_S, deadline - now)):
                fd = int(key.fd)
                if fd in outputs:
                    _read(fd, outputs[fd], selector)
                    continue
                try:
                    written += os.write(fd, data[written : written + WRITE_CHUNK_BYTES])
                except BlockingIOError:
                    continue
                except OSError:  # it exited, or closed its stdin without reading it all: fine
                    written = len(data)
                if written >= len(data):
                    selector.unregister(fd)
                    with contextlib.suppress(OSError):
                        proc.stdin.close()
    try:
        code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return HookRun(None, _text(outputs[proc.stdout.fileno()]), "", timed_out=True)
    return HookRun(code, _text(outputs[proc.stdout.fileno()]), _text(outputs[proc.stderr.fileno()]))


def _read(fd: int, kept: bytearray, selector: selectors.BaseSelector) -> None:
    try:
        chunk = os.read(fd, READ_CHUNK_BYTES)
    except BlockingIOError:
        return
    except OSError:
        chunk = b""
    if not chunk:
        selector.unregister(fd)
        return
    kept += chunk[: max(0, OUTPUT_KEEP_BYTES - len(kept))]


def _text(data: bytearray) -> str:
    return bytes(data).decode("utf-8", "replace")
