"""The "python" pytest-xdist starts each worker with: a worker forked from the warm start server.

A worker's first seconds go to importing what the warm server has already imported (the SDK's
3,000 modules, mini-claude, pytest), on every worker. Run as `python -I -S warm_worker.py -u -c
CODE` (what execnet runs for a worker), this asks the server the controller started for a child
that runs CODE with this process's descriptors, working directory, environment and process group,
passes SIGTERM on to it, and exits as it exits. When there is no such server, or it was started
with other interpreter settings (encoding, locale, PYTHON* variables) than this worker would
have, it becomes the worker itself, cold: `python -u -c CODE`.
Standard library and warm_start only, and quick to start: it is not the worker, only its stand-in.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys

# -I leaves this folder off sys.path; warm_start is standard library only until it preloads.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from warm_start import SHARED_SERVER, connect, interpreter_settings


def main(argv: list[str]) -> None:
    # Only what execnet runs (another option, say -B, is not the server's): else started cold.
    code = argv[2] if len(argv) == 3 and argv[:2] == ["-u", "-c"] else None
    conn = _connect(json.loads(os.environ.get(SHARED_SERVER) or "null")) if code else None
    if conn is None:
        os.execv(sys.executable, [sys.executable, *argv])
    request = {"code": code, "env": dict(os.environ), "cwd": os.getcwd(), "process_group": os.getpgrp()}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    started = conn.recv(4096)
    if not started:  # the server went away first: nothing started
        os.execv(sys.executable, [sys.executable, *argv])
    pid = json.loads(started)["pid"]
    for fd in (0, 1):  # the worker has them now: the controller sees their end when it ends
        os.dup2(os.open(os.devnull, os.O_RDWR), fd)
    # The worker is in this process group: a Ctrl+C at the terminal reaches it directly (and this
    # stand-in must outlive it, since the server kills a worker whose stand-in has gone).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda number, _frame: _forward(pid, number))
    answer = conn.recv(4096) or b'{"returncode": -9}'  # nothing: the server itself was killed
    returncode = json.loads(answer)["returncode"]
    if returncode < 0:  # killed by a signal: so is this, as far as it can be
        with contextlib.suppress(OSError, ValueError):
            signal.signal(-returncode, signal.SIG_DFL)
            os.kill(os.getpid(), -returncode)
        os._exit(128 - returncode)
    os._exit(returncode)


def _connect(shared: dict | None) -> socket.socket | None:
    """The server, once it listens; None when there is none this worker may use."""
    if not shared or shared["settings"] != interpreter_settings(os.environ):
        return None
    return connect(shared["socket"], lambda: _alive(shared["pid"]))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _forward(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, number)


if __name__ == "__main__":
    main(sys.argv[1:])
