"""The ways to start mini-claude: a prompt on the command line (REPL or print mode), piped stdin
before it, `--` for a prompt that looks like an option or a command, and the commands still
working beside them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mini_claude.ui.print.print_input import STDIN_MAX_BYTES, STDIN_WAIT_SECONDS
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import main_calls


def first_message(fake: FakeAnthropic) -> str:
    [block] = main_calls(fake)[0].messages[0]["content"]
    return block["text"]


def test_piped_stdin_goes_before_the_prompt(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("A summary."))

    result = cli.run("-p", "summarize this", stdin="line one\nline two\n\n\n")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "A summary.\n"
    assert first_message(api_env) == "line one\nline two\n\nsummarize this"


def test_stdin_alone_is_the_whole_message_as_before(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("ok"))

    assert cli.run(stdin="  just this\n").returncode == 0

    assert first_message(api_env) == "  just this\n"


def test_an_empty_pipe_leaves_the_prompt_alone_and_without_one_is_a_usage_error(
    cli: Cli, api_env: FakeAnthropic
) -> None:
    api_env.stream_replies.append(text_reply("ok"))

    assert cli.run("-p", "the question", stdin=" \n").returncode == 0
    nothing = cli.run("-p", stdin="")

    assert first_message(api_env) == "the question"
    assert nothing.returncode == 2 and "no prompt" in nothing.stderr
    assert len(api_env.requests) == 1


def test_stdin_over_the_limit_is_refused_whole_with_one_line(cli: Cli, api_env: FakeAnthropic) -> None:
    result = cli.run("-p", "summarize", stdin=b"x" * (STDIN_MAX_BYTES + 1))

    assert result.returncode == 2 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert "stdin holds more than 5 MB" in line and "tail -c" in line
    assert api_env.requests == []


def test_stdin_at_the_limit_is_sent(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("big"))
    result = cli.run("-p", "count", stdin=b"y" * STDIN_MAX_BYTES)
    assert result.returncode == 0, result.stderr[-500:]
    assert first_message(api_env) == "y" * STDIN_MAX_BYTES + "\n\ncount"


def test_bytes_that_are_not_utf8_become_replacement_characters_with_a_warning(
    cli: Cli, api_env: FakeAnthropic
) -> None:
    api_env.stream_replies.append(text_reply("ok"))

    result = cli.run("-p", "what is this", stdin=b"caf\xe9 \xff\xfe ok\n")

    assert result.returncode == 0, result.stderr
    assert first_message(api_env) == "caf\ufffd \ufffd\ufffd ok\n\nwhat is this"
    assert "stdin is not valid UTF-8" in result.stderr


def test_binary_stdin_is_refused(cli: Cli, api_env: FakeAnthropic) -> None:
    result = cli.run("-p", "describe", stdin=b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    assert result.returncode == 2 and "binary data (NUL bytes)" in result.stderr
    assert api_env.requests == []


def test_a_silent_open_stdin_is_waited_for_briefly_then_the_prompt_goes_alone(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.append(text_reply("Answered."))
    process = cli.start("-p", "the question", text=True)
    started = time.monotonic()
    try:
        process.wait(timeout=30)  # stdin stays open and silent all along (output fits the pipes)
        stdout, stderr = process.stdout.read(), process.stderr.read()  # type: ignore[union-attr]
    finally:
        process.kill()
        for stream in (process.stdin, process.stdout, process.stderr):
            stream.close()  # type: ignore[union-attr]
    assert process.returncode == 0, stderr
    assert stdout == "Answered.\n"
    assert f"nothing arrived on stdin in {STDIN_WAIT_SECONDS:g} s" in stderr
    assert first_message(api_env) == "the question"
    assert STDIN_WAIT_SECONDS <= time.monotonic() - started < 25


def test_print_mode_on_a_terminal_does_not_wait_for_stdin(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("From a terminal."))
    with cli.terminal("-p", "hello there") as term:
        term.expect("From a terminal.", timeout=STDIN_WAIT_SECONDS)
        assert term.wait_exit() == 0
    assert first_message(api_env) == "hello there"


def test_a_prompt_on_the_command_line_starts_the_repl_with_it(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([text_reply("It is a CLI."), text_reply("Second.")])
    with cli.terminal("explain", "this project") as term:
        term.expect(r"/help for commands")
        shown = term.expect("It is a CLI.")
        assert "> explain this project" in shown
        term.expect_prompt()
        term.submit("and then?")
        term.expect("Second.")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0
    assert first_message(api_env) == "explain this project"
    assert len(main_calls(api_env)) == 2


def test_a_prompt_named_like_a_command_goes_after_dashes(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("Memory is …"))
    with cli.terminal("--", "memory") as term:
        term.expect("Memory is …")
        term.expect_prompt()
    assert first_message(api_env) == "memory"


@pytest.mark.parametrize(
    ("args", "sent"),
    [
        (["-p", "--", "-x is a flag?"], "-x is a flag?"),
        (["-p", "memory"], "memory"),  # with -p every word is the prompt
        (["--", "sessions", "list"], "sessions list"),
        (["what", "--model", "m2", "is", "this"], "what is this"),  # options between the words
        (["-p", "a", "--", "--plain", "--"], "a --plain --"),
    ],
)
def test_the_prompt_words_in_print_mode(cli: Cli, api_env: FakeAnthropic, args: list[str], sent: str) -> None:
    api_env.stream_replies.append(text_reply("ok"))
    result = cli.run(*args)
    assert result.returncode == 0, result.stderr
    assert first_message(api_env) == sent


def test_the_commands_still_work_beside_prompts(cli: Cli, project_dir: Path) -> None:
    memory = cli.run("memory", "list")
    sessions = cli.run("sessions")
    before_options = cli.run("--plain", "memory", "path")

    assert memory.returncode == 0 and memory.stdout.startswith("No memories saved yet for ")
    assert sessions.returncode == 0 and sessions.stdout.startswith("No saved sessions for ")
    assert before_options.returncode == 0 and before_options.stdout.strip().endswith("/memory")


def test_output_format_outside_print_mode_is_a_usage_error(cli: Cli) -> None:
    with cli.terminal("--output-format", "json") as term:
        term.expect("--output-format is for print mode")
        assert term.wait_exit() == 2
