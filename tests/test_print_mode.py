"""Print mode and the command line: stdout/stderr split, exit codes, usage errors."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from mini_claude import __version__
from mini_claude.core.config import project_memory_dir
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, error_reply, multi_tool_reply, text_reply, tool_reply
from tests.kit import wait_for_file


def test_answer_on_stdout_and_tool_lines_on_stderr(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("apple\n")
    api_env.stream_replies.extend(
        [tool_reply("read_file", {"file_path": "a.txt"}, text="Reading."), text_reply("The file says apple.")]
    )

    result = cli.run("-p", "what does a.txt say?")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "The file says apple.\n"
    assert "read_file" in result.stderr and "a.txt" in result.stderr
    assert "apple." not in result.stderr


def test_prompt_piped_on_stdin(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("Piped answer."))

    result = cli.run(stdin="summarise this\nplease\n")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Piped answer.\n"
    assert api_env.requests[0].messages[0]["content"][0]["text"] == "summarise this\nplease\n"


def test_api_error_exits_1_with_the_cause_on_stderr(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(error_reply(400, message="prompt is too long"))

    result = cli.run("-p", "hello there")

    assert result.returncode == 1
    assert result.stdout == ""
    assert "prompt is too long" in result.stderr


def test_a_question_nobody_can_answer_is_a_denial_for_the_model(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": "x.txt", "content": "x"}),
            text_reply("I could not write it."),
        ]
    )

    result = cli.run("-p", "write x.txt")

    assert result.returncode == 0
    assert not (project_dir / "x.txt").exists()
    assert result.stdout == "I could not write it.\n"
    tool_result = api_env.requests[1].messages[-1]["content"][0]
    assert tool_result["is_error"] is True and "--permission-mode" in tool_result["content"]


@pytest.mark.parametrize(
    ("mode", "call", "hint"),
    [
        ("ask", ("write_file", {"file_path": "x.txt", "content": "x"}), "--permission-mode accept-edits"),
        ("accept-edits", ("run_shell", {"command": "touch made"}), "--permission-mode bypass"),
        ("bypass", ("write_file", {"file_path": ".git/hooks/pre-commit", "content": "x"}), "in the REPL"),
    ],
)
def test_a_refusal_says_once_why_and_what_would_allow_it(
    cli: Cli, api_env: FakeAnthropic, mode: str, call: tuple[str, dict[str, str]], hint: str
) -> None:
    api_env.stream_replies.extend([multi_tool_reply([call, call]), text_reply("I could not.")])

    result = cli.run("--permission-mode", mode, "-p", "do it")

    assert result.returncode == 0, result.stderr
    refused, hint_line, refused_again = result.stderr.splitlines()[-3:]
    assert refused == refused_again and refused.startswith(f"✗ {call[0]}(")
    assert refused.endswith(") → permission denied")
    assert hint_line.startswith("(print mode cannot ask for permission") and hint in hint_line
    assert result.stderr.count("cannot ask") == 1


def test_ctrl_c_while_a_command_runs_leaves_its_line_marked_interrupted(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    command = "echo start > started; sleep 30; echo end"
    api_env.stream_replies.append(tool_reply("run_shell", {"command": command}))
    process = cli.start("--permission-mode", "bypass", "-p", "run it", stdin=subprocess.DEVNULL, text=True)
    try:
        wait_for_file(project_dir / "started")
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()

    assert process.returncode == 130, stderr
    assert f"✗ run_shell({command}) → interrupted\n" in stderr


def test_permission_mode_flag_lets_print_mode_write(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": "x.txt", "content": "x"}), text_reply("Done.")]
    )

    result = cli.run("--permission-mode", "accept-edits", "-p", "write x.txt")

    assert result.returncode == 0, result.stderr
    assert (project_dir / "x.txt").read_text() == "x"


def test_model_flag_wins_over_environment(cli: Cli, api_env: FakeAnthropic) -> None:
    cli.env["ANTHROPIC_MODEL"] = "from-env"
    api_env.stream_replies.extend([text_reply("a"), text_reply("b")])

    assert cli.run("-p", "hello there").returncode == 0
    assert cli.run("--model", "from-flag", "-p", "hello there").returncode == 0

    assert [r.model for r in api_env.requests] == ["from-env", "from-flag"]


def test_no_credentials_in_print_mode(cli: Cli) -> None:
    del cli.env["ANTHROPIC_API_KEY"], cli.env["ANTHROPIC_BASE_URL"]

    result = cli.run("-p", "hello there")

    assert result.returncode == 1
    assert "ANTHROPIC_API_KEY" in result.stderr and result.stdout == ""


def test_empty_prompt_is_a_usage_error(cli: Cli) -> None:
    result = cli.run("-p", "   ")
    assert result.returncode == 2
    assert "no prompt" in result.stderr


@pytest.mark.parametrize(
    "args", [["--max-turns", "0"], ["--max-turns", "many"], ["--permission-mode", "yolo"], ["--frobnicate"]]
)
def test_bad_flags_are_usage_errors(cli: Cli, args: list[str]) -> None:
    result = cli.run(*args)
    assert result.returncode == 2
    assert result.stderr.startswith("usage: mini-claude")


def test_bad_environment_number_is_a_usage_error(cli: Cli) -> None:
    cli.env["MINI_CLAUDE_API_TIMEOUT"] = "soon"
    result = cli.run("-p", "hello there")
    assert result.returncode == 2
    assert "MINI_CLAUDE_API_TIMEOUT" in result.stderr


def test_version(cli: Cli) -> None:
    result = cli.run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"mini-claude {__version__}"


def test_a_memory_dir_that_cannot_be_used_is_reported_and_the_answer_still_comes(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    memory_dir = project_memory_dir(str(project_dir))
    (memory_dir / ".lock").mkdir(parents=True)  # the store cannot take its lock: start-up fails
    api_env.stream_replies.append(text_reply("Answered anyway."))

    result = cli.run("-p", "hello there")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Answered anyway.\n"
    assert result.stderr.count("Memory index not refreshed") == 1
    assert f"{memory_dir}: Is a directory (.lock)" in result.stderr


def test_help_shows_the_ways_to_start_it(cli: Cli) -> None:
    result = cli.run("--help")

    assert result.returncode == 0
    usage = result.stdout.split("\n\n")[0]
    for way in ("[options] [PROMPT]", "-p [PROMPT]", "CMD | mini-claude", "-- PROMPT", "sessions [list]"):
        assert way in usage, usage
    assert "memory [list | show NAME | edit NAME | rm [-y] NAME | path]" in usage
    assert "memory promote | demote | share NAME" in usage
    assert "memory projects [adopt | remove [-y] FOLDER]" in usage
    assert "COMMAND" not in usage  # the commands are optional, not a required word
    assert "3 at the\n--max-turns limit" in result.stdout  # the exit codes, in the epilog
