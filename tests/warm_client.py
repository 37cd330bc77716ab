"""The test side of `warm_start`: start the program from the warm server, piped or in a pty.

One server per test process (each pytest-xdist worker has its own), started on first use and
stopped when the session ends (`stop_warm_starter`, called from conftest) or the process exits.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import pty
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from pexpect.fdpexpect import fdspawn

import mini_claude

SERVER = Path(__file__).with_name("warm_start.py")
MAIN = str(Path(mini_claude.__file__).with_name("__main__.py"))
READY_SECONDS = 60
EXIT_GRACE_SECONDS = 5
CERTIFICATE_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR")
COLD_SWITCH = "MINI_CLAUDE_TEST_COLD"  # set to 1: every test starts the program cold, as before
# Read once, at import: each test's environment is cleared of MINI_CLAUDE_* settings (conftest).
ALL_COLD = os.environ.get(COLD_SWITCH) == "1"


def interpreter_settings(env: Mapping[str, str]) -> dict[str, str]:
    """What a Python reads once at start (stdio encoding, buffering, paths, modes): a child forked
    from the server has the server's, so only a request with the same ones can be served warm."""
    return {k: v for k, v in env.items() if k.startswith(("PYTHON", "LC_", "LANG"))}


class WarmProcess:
    """A program forked by the server: its pid, and its return code once the server reports it."""

    def __init__(self, conn: socket.socket, pid: int, argv: list[str]) -> None:
        self.conn, self.pid, self.args = conn, pid, argv
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.wait(0) if self.returncode is None else self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is None:
            readable, _, _ = select.select([self.conn], [], [], timeout)
            if not readable:
                return None
            answer = self.conn.recv(4096)
            self.returncode = json.loads(answer)["returncode"] if answer else -signal.SIGKILL
            self.conn.close()
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            for target in (
                lambda: os.killpg(self.pid, signal.SIGKILL),
                lambda: os.kill(self.pid, signal.SIGKILL),
            ):
                try:
                    target()
                except ProcessLookupError:
                    continue
            self.wait()


class WarmStarter:
    def __init__(self, settings: dict[str, str]) -> None:
        self.settings = settings
        self.folder = tempfile.mkdtemp(prefix="mini-claude-warm-")
        self.socket_path = os.path.join(self.folder, "server.sock")
        env = {"PATH": os.environ.get("PATH", ""), "HOME": self.folder, **settings}
        # Where the tests' programs find CA certificates, so the server makes their TLS context.
        env.update({name: value for name, value in os.environ.items() if name in CERTIFICATE_SETTINGS})
        self.server = subprocess.Popen(
            [sys.executable, "-P", str(SERVER), self.socket_path], env=env, cwd=self.folder,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        readable, _, _ = select.select([self.server.stdout], [], [], READY_SECONDS)
        if not readable or self.server.stdout.readline().strip() != b"ready":
            self.stop()
            raise RuntimeError("the warm start server did not start")

    def start(
        self, argv: list[str], env: Mapping[str, str], cwd: Path, fds: list[int], *, tty: bool
    ) -> WarmProcess:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        conn.connect(self.socket_path)
        request = {"argv": argv, "env": dict(env), "cwd": str(cwd), "tty": tty, "main": MAIN}
        socket.send_fds(conn, [json.dumps(request).encode()], fds)
        pid = json.loads(conn.recv(4096))["pid"]
        return WarmProcess(conn, pid, [sys.executable, "-m", "mini_claude", *argv])

    def stop(self) -> None:
        if self.server.poll() is None:
            self.server.stdin.close()  # the server kills what still runs, then exits
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


_starter: WarmStarter | None = None
_lock = threading.Lock()


def warm_starter(env: Mapping[str, str]) -> WarmStarter | None:
    """The server that can start the program with this environment, or None: start it cold."""
    global _starter
    if ALL_COLD or env.get(COLD_SWITCH) == "1":
        return None
    settings = interpreter_settings(env)
    with _lock:
        if _starter is None:
            _starter = WarmStarter(settings)
            atexit.register(stop_warm_starter)
    return _starter if _starter.settings == settings else None


def stop_warm_starter() -> None:
    global _starter
    with _lock:
        if _starter is not None:
            _starter.stop()
            _starter = None


class WarmPopen:
    """A program started warm with pipes, offering what the tests use of `subprocess.Popen`: pid,
    args, returncode, stdin/stdout/stderr (binary, or text as `text=True` gives), poll, wait,
    send_signal, kill and communicate. `stdin` is PIPE, DEVNULL or an open file."""

    def __init__(
        self, starter: WarmStarter, argv: list[str], env: Mapping[str, str], cwd: Path, *,
        stdin: int | IO[Any] = subprocess.PIPE, text: bool = False,
    ) -> None:  # fmt: skip
        piped = stdin == subprocess.PIPE
        ours: list[int] = []
        if piped:
            child_stdin, stdin_write = os.pipe()
            ours.append(stdin_write)
        elif stdin == subprocess.DEVNULL:
            child_stdin = os.open(os.devnull, os.O_RDONLY)
        else:
            child_stdin = os.dup(stdin.fileno())  # type: ignore[union-attr]
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        ours += [out_read, err_read]
        try:
            self._process = starter.start(argv, env, cwd, [child_stdin, out_write, err_write], tty=False)
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in (child_stdin, out_write, err_write):
                os.close(fd)
        self.pid, self.args = self._process.pid, self._process.args
        self.stdin = _stream(stdin_write, "w", text) if piped else None
        self.stdout = _stream(out_read, "r", text)
        self.stderr = _stream(err_read, "r", text)

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    def poll(self) -> int | None:
        return self._process.poll()

    def wait(self, timeout: float | None = None) -> int:
        code = self._process.wait(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self._process.kill()

    def communicate(self, input: bytes | str | None = None, timeout: float | None = None) -> tuple[Any, Any]:
        """Feed `input` (then close stdin), read both outputs to the end, wait; on a timeout raise
        TimeoutExpired and leave the program running, as Popen does."""
        deadline = None if timeout is None else time.monotonic() + timeout
        output: dict[str, Any] = {}
        threads = [
            threading.Thread(target=lambda n=name, s=stream: output.setdefault(n, s.read()), daemon=True)
            for name, stream in (("stdout", self.stdout), ("stderr", self.stderr))
        ]
        if self.stdin is not None:
            threads.append(threading.Thread(target=_feed, args=(self.stdin, input), daemon=True))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0))
            if thread.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0, output.get("stdout"))
        self.wait(None if deadline is None else max(deadline - time.monotonic(), 0))
        self.stdout.close()
        self.stderr.close()
        return output["stdout"], output["stderr"]


def _stream(fd: int, mode: str, text: bool) -> IO[Any]:
    if text:  # as Popen's text=True: UTF-8 here, universal newlines
        return open(fd, mode, encoding="utf-8", errors="replace")
    return open(fd, mode + "b")


def _feed(stream: IO[Any], data: bytes | str | None) -> None:
    try:
        if data:
            stream.write(data)
    except OSError:  # the program stopped reading (or exited): as subprocess, say nothing
        pass
    finally:
        with contextlib.suppress(OSError):
            stream.close()


class WarmTerminalChild(fdspawn):
    """The pexpect side of a program started warm in a pseudo-terminal: what `pexpect.spawn` offers
    the tests (expect, send, sendcontrol, kill, terminate, close, exitstatus, signalstatus)."""

    def __init__(self, process: WarmProcess, master: int, **options: object) -> None:
        super().__init__(master, args=process.args, **options)
        self.process, self.pid = process, process.pid
        self.exitstatus: int | None = None
        self.signalstatus: int | None = None

    def isalive(self) -> bool:
        return self.process.poll() is None

    def kill(self, sig: int) -> None:
        if self.isalive():
            os.kill(self.pid, sig)

    def sendcontrol(self, char: str) -> int:
        code = (
            ord(char.lower()) - ord("a") + 1
            if char.isalpha()
            else {"@": 0, "[": 27, "\\": 28, "]": 29, "^": 30, "_": 31, "?": 127}[char]
        )
        return self.send(chr(code))

    def terminate(self, force: bool = False) -> bool:
        self.process.kill()
        return True

    def close(self, force: bool = True) -> None:
        if not self.closed:
            super().close()
        # As pexpect's close: a program that has just closed the terminal gets a moment to exit.
        code = self.process.wait(EXIT_GRACE_SECONDS if force else None)
        if code is None:
            self.process.kill()
            code = self.process.wait()
        if code is not None:
            self.exitstatus = code if code >= 0 else None
            self.signalstatus = -code if code < 0 else None


def open_terminal(
    starter: WarmStarter,
    argv: list[str],
    env: Mapping[str, str],
    cwd: Path,
    rows: int,
    columns: int,
    **options: object,
) -> WarmTerminalChild:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    try:
        process = starter.start(argv, env, cwd, [slave, slave, slave], tty=True)
    except BaseException:
        os.close(master)
        raise
    finally:
        os.close(slave)
    return WarmTerminalChild(process, master, **options)
