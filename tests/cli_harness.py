"""Running the real `mini-claude` program: in a pseudo-terminal (pexpect) or as a plain subprocess.

Each run is a new process; it is forked from an interpreter that has already imported mini-claude
(`warm_start`) unless its environment needs a cold start or MINI_CLAUDE_TEST_COLD=1 is set."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pexpect

from tests.kit import wait_until
from tests.warm_client import WarmPopen, open_terminal, warm_starter
from tests.warm_start import limit_file_size

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\x1b[=>]|\r")
# The input prompt "> " as prompt-toolkit draws it: escape codes may sit between the newline and ">".
PROMPT_PATTERN = r"(?:^|\n)(?:\x1b\[[0-?]*[ -/]*[@-~])*>(?:\x1b\[[0-?]*[ -/]*[@-~])*[ \x1b]"
TIMEOUT = 15
SHOWN_ON_FAILURE = 2000  # characters of the screen a failed expect reports
TIOCGPTN = 0x80045430  # Linux: the number N of a pseudo-terminal's /dev/pts/N, asked of its master
KEYS_READ_POLL_SECONDS = 0.005


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def colour_codes(raw: str) -> list[int]:
    """SGR parameters that set a colour: 30-49 (38;… and 48;… included) and the bright 90-107."""
    numbers = [int(n) for params in re.findall(r"\x1b\[([0-9;]*)m", raw) for n in params.split(";") if n]
    return [n for n in numbers if 30 <= n <= 49 or 90 <= n <= 107]


class Terminal:
    """One interactive session, read and typed into the way a person would."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child

    def expect(self, pattern: str, timeout: float = TIMEOUT) -> str:
        """Wait for `pattern` (a regex) to appear; return everything printed before it, without ANSI codes."""
        try:
            self.child.expect(pattern, timeout=timeout)
        except (pexpect.TIMEOUT, pexpect.EOF) as error:
            # What the program did print says why (pexpect's own message shows none of it).
            printed = strip_ansi(self.child.before or "")[-SHOWN_ON_FAILURE:]
            ended = "it exited" if isinstance(error, pexpect.EOF) else f"{timeout:g} s passed"
            raise AssertionError(f"{ended} before {pattern!r} appeared; it printed:\n{printed}") from None
        return strip_ansi(self.child.before or "")

    def expect_prompt(self, timeout: float = TIMEOUT) -> str:
        return self.expect(PROMPT_PATTERN, timeout)

    def wait_until_ready(self) -> None:
        """The banner, then the first prompt."""
        self.expect(r"/help for commands")
        self.expect_prompt()

    def type(self, text: str) -> None:
        self.child.send(text)

    def submit(self, text: str) -> None:
        self.child.send(text + "\r")

    def type_and_wait_until_read(self, text: str, timeout: float = TIMEOUT) -> None:
        """Type `text`, then wait until the program has read all of it (so whatever it is doing, a
        reply the fake holds open, say, it is doing while these keys arrive): its process has read
        that many more bytes (/proc/PID/io), its terminal holds none unread, and it reads byte by
        byte (in line mode a line still being typed would look read). The terminal alone cannot
        say: typed bytes reach its queue a moment after the write, from a kernel worker."""
        number = struct.unpack("I", fcntl.ioctl(self.child.child_fd, TIOCGPTN, bytes(4)))[0]
        terminal = os.open(f"/dev/pts/{number}", os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        try:
            before = _bytes_read(self.child.pid)
            self.child.send(text)

            line_mode, read = False, 0

            def all_read() -> bool:
                nonlocal line_mode, read
                line_mode = bool(termios.tcgetattr(terminal)[3] & termios.ICANON)
                unread = struct.unpack("i", fcntl.ioctl(terminal, termios.FIONREAD, bytes(4)))[0]
                read = _bytes_read(self.child.pid) - before
                return read >= len(text.encode()) and not unread and not line_mode

            if not wait_until(all_read, timeout, KEYS_READ_POLL_SECONDS):
                why = "its terminal is in line mode" if line_mode else f"{read} bytes read"
                raise AssertionError(f"{timeout:g} s passed and the program has not read {text!r}: {why}")
        finally:
            os.close(terminal)

    def ctrl(self, key: str) -> None:
        self.child.sendcontrol(key)

    def wait_exit(self, timeout: float = TIMEOUT) -> int:
        self.child.expect(pexpect.EOF, timeout=timeout)
        self.child.close()
        return self.child.exitstatus if self.child.exitstatus is not None else -(self.child.signalstatus or 0)


def _bytes_read(pid: int) -> int:
    """What process `pid` has read so far, from anything (the kernel's count, all its threads)."""
    with open(f"/proc/{pid}/io") as counts:
        return next(int(line.split()[1]) for line in counts if line.startswith("rchar:"))


def program_env() -> dict[str, str]:
    """The environment a test's program gets: this process's, for a terminal like pexpect's."""
    # COLUMNS/LINES (which pytest-xdist's workers have) would win over the terminal's own size.
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PYTEST") and key not in ("COLUMNS", "LINES")
    }
    env.update(TERM="xterm-256color", PYTHONUNBUFFERED="1", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    # pexpect is a terminal that never answers cursor-position requests; say so, as such
    # terminals do, instead of letting prompt-toolkit wait ~2 s for an answer that never comes.
    env["PROMPT_TOOLKIT_NO_CPR"] = "1"
    return env


class Cli:
    """Starts mini-claude with this test's HOME, project directory and environment."""

    def __init__(self, project_dir: Path) -> None:
        self.project_dir = project_dir
        self.env = program_env()

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "mini_claude", *args]

    @contextmanager
    def terminal(self, *args: str, columns: int = 100, rows: int = 40) -> Iterator[Terminal]:
        options = {"encoding": "utf-8", "codec_errors": "replace", "timeout": TIMEOUT}
        starter = warm_starter(self.env)
        if starter is not None:
            child = open_terminal(starter, list(args), self.env, self.project_dir, rows, columns, **options)
        else:
            command = self.command(*args)
            child = pexpect.spawn(
                command[0], command[1:], cwd=str(self.project_dir), env=self.env,
                dimensions=(rows, columns), **options,
            )  # fmt: skip
        try:
            yield Terminal(child)
        finally:
            if child.isalive():
                child.terminate(force=True)
            child.close(force=True)

    def start(
        self, *args: str, stdin: int | IO[Any] = subprocess.PIPE, text: bool = False,
        file_size_limit: int | None = None, stdout_closed: bool = False,
    ) -> subprocess.Popen | WarmPopen:  # fmt: skip
        """Start it with stdout and stderr piped, as `subprocess.Popen` would, for a test that acts
        while it runs (keeps stdin open, sends a signal); `stdin` is PIPE, DEVNULL or a file.
        `file_size_limit`: its writes past that many bytes fail (`warm_start.limit_file_size`).
        `stdout_closed`: its stdout is a pipe nobody reads, closed before it starts (no stdout)."""
        read_end, write_end = os.pipe() if stdout_closed else (-1, -1)
        if stdout_closed:
            os.close(read_end)
        stdout = write_end if stdout_closed else subprocess.PIPE
        try:
            starter = warm_starter(self.env)
            if starter is not None:
                return WarmPopen(
                    starter, list(args), self.env, self.project_dir, stdin=stdin, text=text,
                    file_size_limit=file_size_limit, stdout=stdout,
                )  # fmt: skip
            limited = None if file_size_limit is None else lambda: limit_file_size(file_size_limit)
            return subprocess.Popen(
                self.command(*args), cwd=self.project_dir, env=self.env, stdin=stdin,
                stdout=stdout, stderr=subprocess.PIPE, text=text, preexec_fn=limited,
            )  # fmt: skip
        finally:
            if stdout_closed:
                os.close(write_end)

    def run(
        self, *args: str, stdin: str | bytes | None = None, timeout: float = 60,
        file_size_limit: int | None = None,
    ) -> subprocess.CompletedProcess[str]:  # fmt: skip
        """Run to the end with `stdin` piped in (bytes as they are, so a test can send bad UTF-8);
        stdout and stderr come back as text, undecodable bytes replaced."""
        done = self.run_bytes(*args, stdin=stdin, timeout=timeout, file_size_limit=file_size_limit)
        return subprocess.CompletedProcess(done.args, done.returncode, _text(done.stdout), _text(done.stderr))

    def run_bytes(
        self, *args: str, stdin: str | bytes | None = None, timeout: float = 60,
        file_size_limit: int | None = None,
    ) -> subprocess.CompletedProcess[bytes]:  # fmt: skip
        """As `run`, with stdout and stderr as the bytes written."""
        data = stdin.encode() if isinstance(stdin, str) else stdin if stdin is not None else b""
        process = self.start(*args, file_size_limit=file_size_limit)
        try:
            stdout, stderr = process.communicate(data, timeout=timeout)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _text(data: bytes) -> str:
    # Universal newlines, as text=True gave: a lone \r in output must stay visible to tests.
    return data.decode("utf-8", "replace").replace("\r\n", "\n")
