"""Claude Code's names for flags work as there: `--permission-mode default|acceptEdits|
bypassPermissions`, `--dangerously-skip-permissions`, `-v`. Print mode cannot ask, so what a
mode allows shows as what gets done."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude import __version__
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, multi_tool_reply, text_reply

WRITE = ("write_file", {"file_path": "edited.txt", "content": "x"})
SHELL = ("run_shell", {"command": "touch ran"})


@pytest.mark.parametrize(
    ("args", "env_mode", "writes", "runs"),
    [
        (["--permission-mode", "default"], None, False, False),
        (["--permission-mode", "acceptEdits"], None, True, False),
        (["--permission-mode", "bypassPermissions"], None, True, True),
        (["--dangerously-skip-permissions"], None, True, True),
        (["--dangerously-skip-permissions", "--permission-mode", "bypassPermissions"], None, True, True),
        ([], "acceptEdits", True, False),
    ],
    ids=["default", "acceptEdits", "bypassPermissions", "skip-permissions", "both", "env-acceptEdits"],
)
def test_claude_codes_permission_names_allow_what_ours_do(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, args: list[str], env_mode: str | None,
    writes: bool, runs: bool,
) -> None:  # fmt: skip
    if env_mode:
        cli.env["MINI_CLAUDE_PERMISSION_MODE"] = env_mode
    api_env.stream_replies.extend([multi_tool_reply([WRITE, SHELL]), text_reply("Done what I could.")])

    result = cli.run(*args, "-p", "edit and run")

    assert result.returncode == 0, result.stderr
    assert (project_dir / "edited.txt").exists() is writes
    assert (project_dir / "ran").exists() is runs


def test_skipping_permissions_beside_another_mode_is_one_usage_line(cli: Cli, api_env: FakeAnthropic) -> None:
    result = cli.run("--dangerously-skip-permissions", "--permission-mode", "acceptEdits", "-p", "hi")

    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        "mini-claude: error: --dangerously-skip-permissions means bypass; "
        "it does not go with --permission-mode acceptEdits"
    )
    assert api_env.requests == []


def test_an_unknown_mode_names_both_sets_of_names(cli: Cli) -> None:
    result = cli.run("--permission-mode", "dontAsk", "-p", "hi")
    assert result.returncode == 2
    names = "'ask', 'accept-edits', 'plan', 'bypass', 'default', 'acceptEdits', 'bypassPermissions'"
    assert names in result.stderr


def test_v_is_version(cli: Cli) -> None:
    short, long = cli.run("-v"), cli.run("--version")
    assert short.returncode == 0 and short.stdout == long.stdout == f"mini-claude {__version__}\n"
