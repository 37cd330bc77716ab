"""The MCP test servers forked warm: importing the SDK's server side (and uvicorn) costs about a
second of CPU a start, and the suite starts a server some forty times. One Python imports
`servers.py` once and forks a server per start; `python servers.py KIND ...`, the command the
tests configure, hands its stdin, stdout, stderr, folder, umask, environment and arguments to it,
then lives exactly as long as that server does and exits as it did. So the client under test still
starts a real process and speaks to a real server written with the SDK; only the imports are
shared. A start that finds no warm server (outside pytest, say) runs the server itself.

The fork server is `python -P warm.py SOCKET`, with the protocol and loop of tests/warm_start.py;
`WarmServers` starts it and names it in the environment (WARM_SERVERS), which the program passes
on to the stdio servers it starts, and `http_server` to the HTTP ones.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

REPOSITORY = str(Path(__file__).resolve().parents[2])
if REPOSITORY not in sys.path:  # run as a script (the servers, the fork server): for tests.warm_start
    sys.path.insert(1, REPOSITORY)

from tests.warm_start import (  # noqa: E402  (after the path it is found on)
    _exit_as_the_interpreter_would,
    _new_stdio,
    connect,
    current_umask,
    exit_if_abandoned_while,
    serve,
    take_stdio,
)

WARM_SERVERS = "MCP_TEST_WARM_SERVERS"  # {"socket", "pid"} of the fork server
HERE = Path(__file__).resolve().parent


def hand_over() -> None:
    """In `python servers.py ...`: have the warm server fork this server, then wait for it and exit
    as it did. Returns (nothing done) when there is no warm server to fork from."""
    shared = json.loads(os.environ.get(WARM_SERVERS) or "null")
    if shared is None:
        return
    conn = connect(shared["socket"], lambda: _alive(shared["pid"]))
    if conn is None:
        return
    request = {"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(), "umask": current_umask()}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    conn.recv(4096)  # {"pid": ...}: it runs
    # The server holds the pipes now: ours closed, its end of them is what the client sees.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    answer = conn.recv(4096)  # when this process is killed instead, the server kills its child
    code = json.loads(answer)["returncode"] if answer else -signal.SIGKILL
    if code < 0:  # killed by a signal: so is this process
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class WarmServers:
    """The fork server this process launched; `stop` ends it (and any server still running)."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="mcp-warm-")
        self.socket_path = os.path.join(self.folder, "server.sock")
        self.process = subprocess.Popen(
            [sys.executable, "-P", __file__, self.socket_path],
            cwd=self.folder, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.environ[WARM_SERVERS] = json.dumps({"socket": self.socket_path, "pid": self.process.pid})

    def stop(self) -> None:
        os.environ.pop(WARM_SERVERS, None)
        if self.process.poll() is None:
            self.process.stdin.close()  # type: ignore[union-attr]
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for name in os.listdir(self.folder):
            os.unlink(os.path.join(self.folder, name))
        os.rmdir(self.folder)


def _preload() -> None:
    sys.path.insert(0, str(HERE))
    import servers  # noqa: F401  (the SDK's server side, uvicorn, starlette)


def _become_the_server(request: dict, fds: list[int]) -> None:
    """In the forked child: what `python servers.py ARGS` started by the client would have."""
    take_stdio(fds)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = [str(HERE / "servers.py"), *request["argv"]]
    _new_stdio(unbuffered=bool(os.environ.get("PYTHONUNBUFFERED")))
    import servers

    code: object = 0
    try:
        servers.main()
    except SystemExit as leaving:
        code = leaving.code
    except BaseException:
        traceback.print_exc()
        code = 1
    _exit_as_the_interpreter_would(code)


if __name__ == "__main__":
    import gc

    exit_if_abandoned_while(_preload)
    gc.freeze()  # (see warm_start: children's collections would copy the whole heap)
    _become_the_server(*serve(sys.argv[1]))
