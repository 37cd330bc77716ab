"""A closed stdout (`| head -1`, `| true`) ends every command quietly: no traceback, no "cannot
read" message, and the status a program killed by SIGPIPE gets (141), as `yes | head` reports."""

from __future__ import annotations

import subprocess

import pytest

from mini_claude.ui.print.closed_stdout import EXIT_STDOUT_CLOSED
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply


def run_with_stdout_closed(cli: Cli, *args: str) -> tuple[int, str]:
    """Start the program with nobody reading its stdout (the pipe's reader is gone before it
    starts, so even a quick `--version` cannot write first); its status and its stderr."""
    process = cli.start(*args, stdin=subprocess.DEVNULL, stdout_closed=True)
    assert process.stdout is None and process.stderr is not None
    stderr = process.stderr.read()
    process.stderr.close()
    return process.wait(timeout=30), stderr.decode("utf-8", "replace")


@pytest.mark.parametrize(
    "args",
    [
        ("-p", "hello"),
        ("--output-format", "json", "-p", "hello"),
        ("--output-format", "stream-json", "--verbose", "-p", "hello"),
    ],
    ids=["text", "json", "stream-json"],
)
def test_print_mode_ends_quietly(cli: Cli, api_env: FakeAnthropic, args: tuple[str, ...]) -> None:
    api_env.stream_replies.append(text_reply("An answer nobody reads."))

    status, stderr = run_with_stdout_closed(cli, *args)

    assert status == EXIT_STDOUT_CLOSED == 141
    assert "Traceback" not in stderr and "Broken pipe" not in stderr and "BrokenPipe" not in stderr


@pytest.mark.parametrize(
    "args",
    [("--help",), ("--version",), ("sessions", "list"), ("memory", "list"), ("memory", "path")],
    ids=["help", "version", "sessions", "memory-list", "memory-path"],
)
def test_commands_end_quietly(cli: Cli, args: tuple[str, ...]) -> None:
    status, stderr = run_with_stdout_closed(cli, *args)

    assert status == EXIT_STDOUT_CLOSED
    assert stderr == ""


def test_a_usage_error_keeps_its_own_status(cli: Cli) -> None:
    status, stderr = run_with_stdout_closed(cli, "--no-such-flag")
    assert status == 2 and "unrecognized arguments" in stderr
