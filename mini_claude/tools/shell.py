"""The run_shell tool: one `bash -c` command in the project folder, with a deadline and capped output.

The command runs in its own session (process group), so a timeout or Ctrl+C can stop everything
it started, and a background child that keeps the output pipe open cannot make us wait forever.
"""

from __future__ import annotations

import codecs
import logging
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.interrupts import stop_if_requested
from mini_claude.tools.base import ToolContext, ToolResult

DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 600.0
DETAIL_LINES = 3  # of a command's output, kept under its tool line once it is done
MAX_OUTPUT_CHARS = 30_000  # head and tail halves are kept, the middle is dropped
READ_CHUNK_BYTES = 64 * 1024
POLL_INTERVAL_S = 0.1  # how often we notice that the command exited while the pipe stays open
DRAIN_AFTER_EXIT_S = 1.0  # keep reading this long after exit, for output still in flight
TERM_GRACE_S = 2.0  # after SIGTERM, before SIGKILL
KILL_GRACE_S = 1.0
# No pager, no credential prompt: there is no one at a terminal to answer them.
SHELL_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}

log = logging.getLogger("mini_claude")


@dataclass(frozen=True)
class _Outcome:
    output: str
    returncode: int | None
    timed_out: bool
    detached: bool  # exited, but background processes still held the output open


def run_shell(ctx: ToolContext, command: str, timeout: float | None = None) -> ToolResult:
    if not command.strip():
        raise ToolError(prompts.notice("shell_empty"))
    requested = DEFAULT_TIMEOUT_S if timeout is None else timeout
    # NaN compares false with everything (itself too): min/max would pass it through and remove the
    # deadline. `!=` rather than math.isnan, which cannot take an int too large for a float.
    if isinstance(requested, bool) or not isinstance(requested, int | float) or requested != requested:
        raise ToolError(prompts.notice("shell_bad_timeout", timeout=timeout, max=f"{MAX_TIMEOUT_S:g}"))
    seconds = float(min(max(requested, 1.0), MAX_TIMEOUT_S))  # ints of any size compare exactly
    ctx.permissions.check_shell("run_shell", command)
    return _run(ctx, command, seconds, capped=requested > MAX_TIMEOUT_S)


def run_user_command(ctx: ToolContext, command: str) -> ToolResult:
    """A command the user typed at the prompt (`!cmd`): no permission question, since the user is
    the one asking, and otherwise run_shell's: the folder, the deadline, the output cap."""
    if not command.strip():
        raise ToolError(prompts.notice("shell_empty"))
    return _run(ctx, command, DEFAULT_TIMEOUT_S, capped=False)


def _run(ctx: ToolContext, command: str, seconds: float, *, capped: bool) -> ToolResult:
    outcome = _execute(command, ctx.project_dir, seconds, ctx.output)
    if ctx.memory_writer is not None:
        try:
            ctx.memory_writer.refresh()
        except Exception:  # the command's output matters more than a stale memory index
            log.exception("memory refresh after run_shell failed")
    return _format(outcome, seconds, capped=capped)


def _execute(command: str, cwd: Path, timeout: float, on_output: Callable[[str], None] | None) -> _Outcome:
    shell = shutil.which("bash") or "/bin/sh"
    try:
        proc = subprocess.Popen(
            [shell, "-c", command],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **SHELL_ENV},
        )
    except OSError as error:
        raise ToolError(
            prompts.notice("shell_start_failed", shell=shell, error=error.strerror or error)
        ) from None
    assert proc.stdout is not None
    output = _CappedOutput(MAX_OUTPUT_CHARS, on_output)
    try:
        timed_out, detached = _pump(proc, output, time.monotonic() + timeout)
        if timed_out:
            kill_group(proc)
        output.feed(b"", final=True)
    except BaseException:  # KeyboardInterrupt above all: stop everything the command started
        kill_group(proc)
        raise
    finally:
        proc.stdout.close()
    return _Outcome(output.text(), proc.poll(), timed_out, detached)


def _pump(proc: subprocess.Popen[bytes], output: _CappedOutput, deadline: float) -> tuple[bool, bool]:
    """Read the command's output until EOF, the deadline, or shortly after it exits.

    Returns (timed_out, detached).
    """
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now >= min(deadline, exited_at + DRAIN_AFTER_EXIT_S):
                return False, True
            if now >= deadline:
                return True, False
            stop_if_requested()  # a sub-agent's command stops with it (Esc)
            if not selector.select(min(POLL_INTERVAL_S, deadline - now)):
                continue
            try:
                chunk = os.read(fd, READ_CHUNK_BYTES)
            except BlockingIOError:
                continue
            if not chunk:
                break
            output.feed(chunk)
    # EOF: every writer closed the pipe, but the command itself may still be running.
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return True, False
    return False, False


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the command's whole process group, then SIGKILL whatever is left."""
    for sig, grace in ((signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        if _group_gone(proc, grace):
            break
    proc.poll()


def _group_gone(proc: subprocess.Popen[bytes], grace: float) -> bool:
    end = time.monotonic() + grace
    while True:
        proc.poll()  # reap our own child, or it lingers in the group as a zombie
        if not _group_alive(proc.pid):
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(0.02)


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count).

    Orphaned children are reparented to PID 1, which may be slow to reap them; on Linux we look
    at /proc so a dead-but-unreaped child does not make us wait out the whole grace period.
    """
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        entries = [entry.name for entry in os.scandir("/proc") if entry.name.isdigit()]
    except OSError:
        return True  # no /proc (macOS): trust killpg
    for pid in entries:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat_file:
                fields = stat_file.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def _format(outcome: _Outcome, seconds: float, *, capped: bool) -> ToolResult:
    shown_seconds = f"{seconds:g}"
    parts = []
    if capped:
        parts.append(prompts.notice("shell_timeout_capped", max=f"{MAX_TIMEOUT_S:g}"))
    parts.append(outcome.output.rstrip("\n") or prompts.notice("shell_no_output"))
    code = outcome.returncode
    if outcome.timed_out:
        parts.append(prompts.notice("shell_timed_out", seconds=shown_seconds, max=f"{MAX_TIMEOUT_S:g}"))
        summary = f"timed out after {shown_seconds} s"
    elif code is not None and code < 0:
        name = _signal_name(-code)
        parts.append(prompts.notice("shell_killed_by_signal", signal=name))
        summary = f"killed by {name}"
    else:
        parts.append(prompts.notice("shell_exit_code", code=code))
        summary = f"exit {code}"
    if outcome.detached:
        parts.append(prompts.notice("shell_background_detached"))
    return ToolResult("\n".join(parts), summary, is_error=outcome.timed_out, detail=collapsed(outcome.output))


def collapsed(output: str) -> tuple[str, ...]:
    """What the user keeps on screen of a command's output: its first lines and how many more."""
    lines = output.rstrip("\n").split("\n") if output.strip() else []
    if len(lines) <= DETAIL_LINES + 1:
        return tuple(lines)
    rest = len(lines) - DETAIL_LINES
    return (*lines[:DETAIL_LINES], f"… +{rest:,} lines")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class _CappedOutput:
    """Keeps the first and last halves of `limit` characters of a stream, counting what it drops."""

    def __init__(self, limit: int, on_output: Callable[[str], None] | None = None) -> None:
        self._on_output = on_output  # told each piece as it is decoded (the UI shows it live)
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head: list[str] = []
        self._head_len = 0
        self._tail = ""
        self._total = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: bytes, *, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        if text and self._on_output is not None:
            self._on_output(text)
        self._total += len(text)
        room = self._head_limit - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += len(text[:room])
            text = text[room:]
        if text:
            self._tail += text
            if len(self._tail) > 2 * self._tail_limit:  # trim in batches: linear, not quadratic
                self._tail = self._tail[-self._tail_limit :]

    def text(self) -> str:
        head = "".join(self._head)
        tail = self._tail[-self._tail_limit :]
        omitted = self._total - len(head) - len(tail)
        if omitted <= 0:
            return head + tail
        return f"{head}\n{prompts.notice('shell_output_omitted', count=f'{omitted:,}')}\n{tail}"
