"""Stopping a reply means stop: a message typed and sent with Enter while it streamed (queued)
comes back in the prompt as text to edit, never sent by itself; without a stop it is still sent
after the reply."""

from __future__ import annotations

import time

import pytest

from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import held_reply
from tests.test_repl_keys import ESC, sent_texts

SETTLE_S = 0.5  # long enough for a command run by mistake to end the program


@pytest.mark.parametrize("stop", [ESC, "\x03"], ids=["esc", "ctrl-c"])
def test_a_queued_message_comes_back_unsent_after_a_stop(cli: Cli, api_env: FakeAnthropic, stop: str) -> None:
    api_env.stream_replies.extend([held_reply("tick " * 300), text_reply("Edited one answered.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("count slowly")
        term.expect("tick tick")
        term.type_and_wait_until_read("first line\rsecond line\r")  # queued: Enter while it streams
        term.type(stop)
        term.expect("Interrupted.")
        term.expect("second line")  # back in the prompt (sent by itself, it would take the reply)
        term.submit(" edited")  # the text is there to edit: typing goes on at its end
        term.expect("Edited one answered.")
        term.expect_prompt()
    assert sent_texts(api_env) == ["count slowly", "first line\nsecond line edited"]


def test_a_queued_command_is_not_run_after_a_stop(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(held_reply("tick " * 300))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("count slowly")
        term.expect("tick tick")
        term.type_and_wait_until_read("/exit\r")
        term.type(ESC)
        term.expect("Interrupted.")
        term.expect("/exit")
        time.sleep(SETTLE_S)
        assert term.child.isalive()  # /exit waits in the prompt, not run
        term.submit("")
        assert term.wait_exit() == 0


def test_without_a_stop_a_queued_message_is_sent_after_the_reply(cli: Cli, api_env: FakeAnthropic) -> None:
    reply = held_reply("tick " * 40 + "END")
    api_env.stream_replies.extend([reply, text_reply("Queued one answered.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("count slowly")
        term.expect("tick tick")
        term.type_and_wait_until_read("next question\r")
        reply.release.set()
        term.expect("Queued one answered.")
        term.expect_prompt()
    assert sent_texts(api_env) == ["count slowly", "next question"]
