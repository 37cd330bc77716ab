"""run_shell, driven through the registry: output, exit codes, caps, timeouts, Ctrl+C, clean-up."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from mini_claude.safety.permissions import PermissionRequest, Permissions
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.shell import MAX_OUTPUT_CHARS
from tests.tool_harness import REGISTRY, RecordingMemoryWriter, ScriptedUser


@pytest.fixture
def ctx(project_dir: Path) -> ToolContext:
    return ToolContext(project_dir.resolve(), Permissions(project_dir, mode="bypass", ask=None))


def shell(ctx: ToolContext, command: str, **extra: object) -> ToolResult:
    return REGISTRY.run("run_shell", {"command": command, **extra}, ctx)


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie may wait a while for PID 1 to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat_file:
            return stat_file.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def read_pids(path: Path) -> list[int]:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if path.exists() and len(text := path.read_text().split()) >= 2:
            return [int(pid) for pid in text]
        time.sleep(0.01)
    raise AssertionError("the command never wrote its pids")


def test_output_exit_code_and_working_directory(ctx: ToolContext, project_dir: Path) -> None:
    result = shell(ctx, "echo out; echo err >&2; pwd; exit 3")
    assert result.content == f"out\nerr\n{project_dir.resolve()}\nExit code: 3"
    assert result.summary == "exit 3"
    assert not result.is_error


def test_stdin_is_empty_and_no_output_is_said(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = shell(ctx, "cat")
    assert result.content == "(no output)\nExit code: 0"
    assert time.monotonic() - started < 5


def test_killed_by_a_signal(ctx: ToolContext) -> None:
    result = shell(ctx, "kill -SEGV $$")
    assert "killed by SIGSEGV" in result.content
    assert result.summary == "killed by SIGSEGV"


def test_output_is_capped_keeping_head_and_tail(ctx: ToolContext) -> None:
    result = shell(ctx, "echo FIRST; seq 1 100000; echo LAST")
    assert result.content.startswith("FIRST\n")
    assert result.content.endswith("LAST\nExit code: 0")
    assert len(result.content) < MAX_OUTPUT_CHARS + 200
    omitted = int(result.content.split("… ")[1].split(" chars omitted")[0].replace(",", ""))
    total = len("FIRST\n") + sum(len(f"{n}\n") for n in range(1, 100_001)) + len("LAST\n")
    assert omitted == total - MAX_OUTPUT_CHARS


def test_timeout_kills_the_whole_process_group_quickly(ctx: ToolContext, project_dir: Path) -> None:
    pids = project_dir / "pids"
    started = time.monotonic()
    result = shell(ctx, f"echo started; sleep 100 & echo $$ $! > {pids}; wait", timeout=1)
    elapsed = time.monotonic() - started
    assert result.is_error
    assert result.content.startswith("started\nThe command timed out after 1 seconds")
    assert result.summary == "timed out after 1 s"
    assert elapsed < 4
    assert not any(running(pid) for pid in read_pids(pids))


def test_background_child_holding_the_pipe_does_not_block(ctx: ToolContext, project_dir: Path) -> None:
    pids = project_dir / "pids"
    started = time.monotonic()
    result = shell(ctx, f"sleep 30 & echo $$ $! > {pids}; echo done")
    try:
        assert time.monotonic() - started < 5
        assert result.content.startswith("done\nExit code: 0\nNote: the command exited, but processes")
    finally:
        os.kill(read_pids(pids)[1], signal.SIGKILL)


def test_redirected_background_child_returns_at_once(ctx: ToolContext, project_dir: Path) -> None:
    pids = project_dir / "pids"
    started = time.monotonic()
    result = shell(ctx, f"sleep 30 > /dev/null 2>&1 & echo $$ $! > {pids}; echo ok")
    try:
        assert result.content == "ok\nExit code: 0"
        assert time.monotonic() - started < 0.9
    finally:
        os.kill(read_pids(pids)[1], signal.SIGKILL)


def test_ctrl_c_kills_the_group_and_propagates(ctx: ToolContext, project_dir: Path) -> None:
    pids = project_dir / "pids"
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    previous = signal.signal(signal.SIGALRM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
    try:
        with pytest.raises(KeyboardInterrupt):
            shell(ctx, f"sleep 100 & echo $$ $! > {pids}; wait")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not any(running(pid) for pid in read_pids(pids))


def test_timeout_above_the_maximum_is_lowered(ctx: ToolContext) -> None:
    result = shell(ctx, "echo hi", timeout=10_000)
    assert result.content.startswith("(timeout lowered to the maximum of 600 seconds)\nhi")


def test_memory_index_is_refreshed_after_a_command(project_dir: Path) -> None:
    memory_writer = RecordingMemoryWriter()
    ctx = ToolContext(project_dir.resolve(), Permissions(project_dir, mode="bypass", ask=None), memory_writer)
    shell(ctx, "true")
    assert memory_writer.refreshes == 1


def test_shell_asks_unless_bypass_and_denial_does_not_run(project_dir: Path) -> None:
    user = ScriptedUser("n")
    ctx = ToolContext(project_dir.resolve(), Permissions(project_dir, mode="accept-edits", ask=user))
    result = shell(ctx, "touch ran")
    assert result.is_error and "refused" in result.content
    assert not (project_dir / "ran").exists()
    always = "allow Bash(touch:*) in this project"
    assert user.questions == [
        PermissionRequest("run_shell", "shell", "touch ran", "run a shell command", always)
    ]


def test_empty_command_is_an_error(ctx: ToolContext) -> None:
    result = shell(ctx, "   ")
    assert result.is_error and "empty" in result.content
