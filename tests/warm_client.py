"""The test side of `warm_start`: start the program from the warm server, piped or in a pty.

One server per run: under pytest-xdist the controller starts it (`share_warm_starter`) and every
worker uses it, so the SDK is preloaded once, not once a worker; in a single pytest process it is
started on first use. It is stopped when the session ends (`stop_warm_starter`, called from
conftest) or its process exits.
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
from tests.warm_start import SHARED_SERVER, connect, current_umask, interpreter_settings

SERVER = Path(__file__).with_name("warm_start.py")
MAIN = str(Path(mini_claude.__file__).with_name("__main__.py"))
EXIT_GRACE_SECONDS = 5
CERTIFICATE_SETTINGS = ("SSL_CERT_FILE", "SSL_CERT_DIR")
COLD_SWITCH = "MINI_CLAUDE_TEST_COLD"  # set to 1: every test starts the program cold, as before
# Read once, at import: each test's environment is cleared of MINI_CLAUDE_* settings (conftest).
ALL_COLD = os.environ.get(COLD_SWITCH) == "1"
SHARED = json.loads(os.environ.get(SHARED_SERVER) or "null")
_warm_settings: dict[str, str] | None = None  # set by warm_for: other programs start cold


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
    """Starts programs from a warm server: its own (`launch`), or one another process launched."""

    def __init__(self, settings: dict[str, str], socket_path: str) -> None:
        self.settings = settings
        self.socket_path = socket_path
        self.server: subprocess.Popen | None = None
        self.folder: str | None = None

    @classmethod
    def launch(cls, settings: dict[str, str]) -> WarmStarter:
        """A new server, returned while it still preloads (`start` waits for it)."""
        folder = tempfile.mkdtemp(prefix="mini-claude-warm-")
        starter = cls(settings, os.path.join(folder, "server.sock"))
        starter.folder = folder
        env = {"PATH": os.environ.get("PATH", ""), "HOME": folder, **settings}
        # Where the tests' programs find CA certificates, so the server makes their TLS context.
        env.update({name: value for name, value in os.environ.items() if name in CERTIFICATE_SETTINGS})
        starter.server = subprocess.Popen(
            [sys.executable, "-P", str(SERVER), starter.socket_path],
            env=env, cwd=folder,
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        return starter

    def _connect(self) -> socket.socket:
        conn = connect(self.socket_path, lambda: self.server is None or self.server.poll() is None)
        if conn is None:
            raise RuntimeError("the warm start server did not start")
        return conn

    def start(
        self, argv: list[str], env: Mapping[str, str], cwd: Path, fds: list[int], *, tty: bool,
        file_size_limit: int | None = None,
    ) -> WarmProcess:  # fmt: skip
        conn = self._connect()
        request = {
            "argv": argv, "env": dict(env), "cwd": str(cwd), "tty": tty, "main": MAIN,
            "file_size_limit": file_size_limit, "umask": current_umask(),
        }  # fmt: skip
        socket.send_fds(conn, [json.dumps(request).encode()], fds)
        pid = json.loads(conn.recv(4096))["pid"]
        return WarmProcess(conn, pid, [sys.executable, "-m", "mini_claude", *argv])

    def stop(self) -> None:
        """Ends the server if this process launched it (the server kills what still runs)."""
        if self.server is not None and self.server.poll() is None:
            self.server.stdin.close()  # type: ignore[union-attr]
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


_starter: WarmStarter | None = None
_lock = threading.Lock()


def warm_for(settings: dict[str, str]) -> None:
    """Programs started with these interpreter settings (the tests' usual ones) are forked warm;
    any others start cold. A server preloading with a test's odd settings (a PYTHONPATH whose
    sitecustomize holds the SDK's import back) would never be ready, whichever test came first."""
    global _warm_settings
    _warm_settings = settings


def warm_starter(env: Mapping[str, str]) -> WarmStarter | None:
    """The server that can start the program with this environment, or None: start it cold."""
    global _starter
    settings = interpreter_settings(env)
    if ALL_COLD or env.get(COLD_SWITCH) == "1" or settings != _warm_settings:
        return None
    with _lock:
        if _starter is None and SHARED is not None and SHARED["settings"] == settings:
            _starter = WarmStarter(settings, SHARED["socket"])
        if _starter is None:
            _starter = WarmStarter.launch(settings)
            atexit.register(stop_warm_starter)
    return _starter


def share_warm_starter(settings: dict[str, str]) -> None:
    """In pytest-xdist's controller, before it starts the workers: launch the server they share
    (preloading while they collect) and tell them where it is, through their environment."""
    global _starter
    if ALL_COLD:
        return
    with _lock:
        _starter = WarmStarter.launch(settings)
        atexit.register(stop_warm_starter)
    os.environ[SHARED_SERVER] = json.dumps({"socket": _starter.socket_path, "settings": settings})


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
        stdin: int | IO[Any] = subprocess.PIPE, text: bool = False, file_size_limit: int | None = None,
        stdout: int = subprocess.PIPE,
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
        # `stdout`: PIPE, or a descriptor of the caller's to hand over (a pipe nobody reads).
        out_read, out_write = os.pipe() if stdout == subprocess.PIPE else (-1, os.dup(stdout))
        err_read, err_write = os.pipe()
        ours += [fd for fd in (out_read, err_read) if fd >= 0]
        try:
            fds = [child_stdin, out_write, err_write]
            self._process = starter.start(argv, env, cwd, fds, tty=False, file_size_limit=file_size_limit)
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in (child_stdin, out_write, err_write):
                os.close(fd)
        self.pid, self.args = self._process.pid, self._process.args
        self.stdin = _stream(stdin_write, "w", text) if piped else None
        self.stdout = _stream(out_read, "r", text) if out_read >= 0 else None
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
