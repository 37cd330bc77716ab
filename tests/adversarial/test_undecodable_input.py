"""Bytes that are not UTF-8, wherever the user's text comes from (an argument, the REPL, a file
attached with `@`, a `!command`'s output), reach the conversation as U+FFFD: one such byte kept
as a surrogate escape made every request of the conversation fail to encode ("connection …
broke mid-response: UnicodeEncodeError") and broke every later `-c`. The rule is the agent's
(`Agent.run_turn`, `add_context` and every message it adds), whatever the front end."""

from __future__ import annotations

import os
from pathlib import Path

from tests.adversarial.cases import case
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import main_calls, user_texts


@case("crashes", "a prompt argument with bytes that are not UTF-8: sent with U+FFFD; -c goes on")
def test_an_undecodable_argument_is_sent_as_replacement_characters(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([text_reply("first"), text_reply("second")])

    done = cli.run("-p", "hi \udcff\udcfe there")  # argv bytes b"hi \xff\xfe there"
    again = cli.run("-c", "-p", "again")

    assert (done.returncode, done.stdout.strip(), again.returncode, again.stdout.strip()) == (
        0,
        "first",
        0,
        "second",
    )
    assert "hi \ufffd\ufffd there" in user_texts(main_calls(api_env)[0])
    assert all(request.validation_error is None for request in api_env.requests)


@case("crashes", "bytes that are not UTF-8 typed at the REPL, in a @-file's name and its content: U+FFFD")
def test_undecodable_bytes_at_the_repl_are_sent_as_replacement_characters(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "caf\udce9.txt").write_bytes(b"caf\xe9 au lait\n")  # Latin-1, name and content
    api_env.stream_replies.extend([text_reply("first"), text_reply("second")])
    with cli.terminal() as term:
        term.wait_until_ready()
        os.write(term.child.child_fd, b"hi \xff there @caf\xe9.txt\r")  # raw bytes, as a terminal sends
        term.expect("first")
        term.expect_prompt()
        term.submit("and now?")
        term.expect("second")
        term.expect_prompt()

    first, second = main_calls(api_env)
    texts = "\n".join(user_texts(first))
    assert "hi \ufffd there" in texts and "caf\ufffd au lait" in texts
    assert "and now?" in user_texts(second)
    assert all(request.validation_error is None for request in api_env.requests)


@case("crashes", "a !command printing bytes that are not UTF-8, then a message: sent with U+FFFD")
def test_undecodable_command_output_is_sent_as_replacement_characters(
    cli: Cli, api_env: FakeAnthropic
) -> None:
    api_env.stream_replies.append(text_reply("seen"))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("!printf 'caf\\351\\n'")
        term.expect_prompt()
        term.submit("what did it print?")
        term.expect("seen")
        term.expect_prompt()

    assert any("caf\ufffd" in text for text in user_texts(main_calls(api_env)[0]))
