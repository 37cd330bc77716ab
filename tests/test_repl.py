"""The REPL in a real pseudo-terminal, driven the way a person uses it."""

from __future__ import annotations

import signal
from pathlib import Path

from mini_claude.core.config import project_memory_dir
from mini_claude.llm.pricing import PRICES_CHECKED
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import HELD, held_reply


def test_streamed_reply_is_shown_and_the_prompt_returns(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(
        text_reply(
            "## Plan\n\nFirst, **read** the code.\n\n- step one\n- step two\n",
            chunk_size=3,
            delta_delay=0.005,
        )
    )
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("make a plan")
        shown = term.expect(r"step two")
        assert "Plan" in shown and "First, read the code." in shown and "step one" in shown
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0
    assert api_env.requests[0].messages[0]["content"][0]["text"] == "make a plan"


def test_tool_call_with_its_permission_prompt_answered(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": "hello.txt", "content": "hi\n"}, text="Writing it."),
            text_reply("Wrote hello.txt."),
        ]
    )
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("create hello.txt")
        question = term.expect(r"\[y\]es, \[a\]lways, \[n\]o:")
        assert "Allow write_file to write to" in question and "hello.txt" in question
        term.submit("y")
        after = term.expect(r"Wrote hello\.txt\.")
        assert "write_file(hello.txt)" in after and "created, 1 line" in after
        term.expect_prompt()
    assert (project_dir / "hello.txt").read_text() == "hi\n"


def test_denied_permission_is_reported_to_the_model(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.extend(
        [tool_reply("run_shell", {"command": "touch nope"}), text_reply("Understood, not running it.")]
    )
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("run it")
        term.expect(r"\[n\]o:")
        term.submit("n")
        term.expect("Not done: tell mini-claude what to do instead.")  # the turn ends at a no
        term.expect_prompt()
        assert len(api_env.requests) == 1
        term.submit("fine, skip it")
        term.expect("Understood, not running it.")
    assert not (project_dir / "nope").exists()
    result = api_env.requests[1].messages[-1]["content"][0]  # told with the next message
    assert result["is_error"] is True and "refused" in result["content"]


def test_ctrl_c_mid_stream_then_another_message(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend(
        [
            held_reply("tick " * 300),
            text_reply("Second answer."),
        ]
    )
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("count slowly")
        term.expect("tick tick tick")
        term.ctrl("c")
        term.expect("Interrupted.")
        term.expect_prompt()
        term.submit("something else")
        term.expect("Second answer.")
        term.expect_prompt()
    second = api_env.requests[1]
    assert second.validation_error is None
    assert second.messages[1]["role"] == "assistant"
    assert second.messages[1]["content"][0]["text"].startswith("tick tick")
    assert len(second.messages[1]["content"][0]["text"]) < len("tick " * 300)


def test_help_clear_cost_and_unknown_commands(cli: Cli, api_env: FakeAnthropic) -> None:
    usage = {
        "input_tokens": 1234,
        "output_tokens": 56,
        "cache_read_input_tokens": 7,
        "cache_creation_input_tokens": 8,
    }
    api_env.stream_replies.extend([text_reply("First.", usage=usage), text_reply("Fresh start.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/help")
        shown = term.expect(r"Ctrl\+D")
        for name in ("/help", "/clear", "/cost", "/model", "/exit", "/memory", "Alt+Enter"):
            assert name in shown
        term.expect_prompt()
        term.submit("hello there")
        term.expect("First.")
        term.expect_prompt()
        term.submit("/cost")
        cost = term.expect(r"your bill may differ\.")
        assert "input 1,234" in cost and "output 56" in cost and "cache read 7" in cost
        # claude-sonnet-5-5: 1,234 × $2 + 56 × $10 + 7 × $0.10 + 8 × $2.50 per million tokens
        assert "cache write 8 · ≈ $0.0030" in cost and f"checked {PRICES_CHECKED}" in cost
        term.submit("/clear")
        term.child.expect("Started a new conversation.")
        assert "\x1b[2J" in term.child.before  # the screen is cleared too
        term.submit("again")
        term.expect("Fresh start.")
        term.submit("/cots")
        term.expect(r"Unknown command /cots\. Did you mean /cost\?")
        term.submit("/model")
        term.expect("Enter choose")
        term.type("\x1b")  # Esc: the list closes, nothing changed
        term.expect(r"Model: claude-sonnet-5-5 \(unchanged\)")
    assert [m["content"][0]["text"] for m in api_env.requests[1].messages] == ["again"]


def test_cost_of_a_model_without_a_known_price_shows_tokens_only(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("Hi.", usage={"input_tokens": 500, "output_tokens": 20}))
    with cli.terminal("--model", "my-local-model") as term:
        term.wait_until_ready()
        term.submit("hello")
        term.expect("Hi.")
        term.expect_prompt()
        term.submit("/cost")
        cost = term.expect(r"tokens only\.")
        term.expect_prompt()
    assert "input 500, output 20" in cost and "Price unknown for my-local-model" in cost and "$" not in cost


def test_ctrl_c_clears_the_line_and_twice_exits(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("Only the second draft arrived."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.type("draft that I regret")
        term.expect("regret")
        term.ctrl("c")  # clears the line, does not exit
        term.ctrl("c")  # on the empty line: arms the exit
        term.expect("Press Ctrl\\+C again to exit")
        term.submit("second draft")  # typing disarms it
        term.expect("Only the second draft arrived.")
        term.expect_prompt()
        term.ctrl("c")
        term.expect("Press Ctrl\\+C again to exit")
        term.ctrl("c")
        assert term.wait_exit() == 0
    assert api_env.requests[0].messages[0]["content"][0]["text"] == "second draft"


def test_a_ctrl_c_that_arrives_as_a_signal_counts_as_the_key(cli: Cli) -> None:
    """While the exit hint is printed the terminal is briefly out of raw mode, where a second
    Ctrl+C pressed quickly reaches the program as SIGINT instead of a key: it must exit all the same."""
    with cli.terminal() as term:
        term.wait_until_ready()
        term.child.kill(signal.SIGINT)  # on the empty line: arms the exit, as the key does
        term.expect("Press Ctrl\\+C again to exit")
        term.child.kill(signal.SIGINT)
        assert term.wait_exit() == 0


def test_ctrl_d_exits(cli: Cli) -> None:
    with cli.terminal() as term:
        term.wait_until_ready()
        term.ctrl("d")
        assert term.wait_exit() == 0


def test_a_command_typed_before_the_prompt_appears_runs(cli: Cli) -> None:
    """Until the prompt starts, the terminal is in line mode, which turns Enter into Ctrl+J."""
    with cli.terminal() as term:
        term.submit("/help")  # at once: the program has not even started yet
        term.expect(r"Ctrl\+D")
        term.expect_prompt()
        term.ctrl("d")
        assert term.wait_exit() == 0


def test_a_message_typed_while_a_reply_streams_is_sent_after_it(cli: Cli, api_env: FakeAnthropic) -> None:
    held = held_reply("tick " * 200)
    api_env.stream_replies.extend([held, text_reply("Second answer.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("count slowly")
        term.expect("tick tick")
        term.type_and_wait_until_read("next question\r")
        term.expect("queued: next question")  # listed under the reply until it is sent
        held.release.set()
        term.expect("Second answer.")
        term.expect_prompt()
    assert api_env.requests[1].messages[-1]["content"][0]["text"] == "next question"


def test_a_paste_during_a_reply_waits_whole_in_the_prompt_until_enter(
    cli: Cli, api_env: FakeAnthropic
) -> None:
    held = held_reply("tick " * 200)
    api_env.stream_replies.extend([held, text_reply("Got the paste.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("count slowly")
        term.expect("tick tick")
        # A paste (the terminal brackets it) with no final line end: its line break is no Enter.
        term.type_and_wait_until_read("\x1b[200~first line\rsecond line\x1b[201~")
        held.release.set()
        term.expect_prompt()
        term.submit("")
        term.expect("Got the paste.")
        term.expect_prompt()
    sent = [r.messages[-1]["content"][0]["text"] for r in api_env.requests if r.stream]
    assert sent == ["count slowly", "first line\nsecond line"]


def test_a_message_typed_ahead_is_not_taken_as_a_permission_answer(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    held = tool_reply("write_file", {"file_path": "hello.txt", "content": "hi\n"}, text="tick " * 3, **HELD)
    api_env.stream_replies.extend([held, text_reply("Second answer.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("write hello.txt")
        term.expect("tick tick")
        term.type_and_wait_until_read("yes\r")  # typed during the reply: the next message, not the answer
        held.release.set()
        term.expect(r"\[y\]es, \[a\]lways, \[n\]o:")
        term.submit("n")
        term.expect("Second answer.")
        term.expect_prompt()
    assert not (project_dir / "hello.txt").exists()
    assert api_env.requests[-1].messages[-1]["content"][-1]["text"] == "yes"


def test_ctrl_d_typed_before_the_prompt_appears_exits(cli: Cli) -> None:
    with cli.terminal() as term:
        term.ctrl("d")
        assert term.wait_exit() == 0


def test_multiline_input_with_ctrl_j_is_one_message(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("Got both lines."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.type("line one")
        term.ctrl("j")
        term.type("line two\x1b[200~\npasted three\x1b[201~")
        term.submit("")
        term.expect("Got both lines.")
    assert api_env.requests[0].messages[0]["content"][0]["text"] == "line one\nline two\npasted three"


def test_without_an_api_key_local_commands_work_and_chat_says_what_to_set(cli: Cli) -> None:
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        cli.env.pop(key)
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/help")
        term.expect(r"Ctrl\+D")
        term.submit("hello there")
        line = term.expect(r"ANTHROPIC_BASE_URL[^\n]*")
        assert "ANTHROPIC_API_KEY" in line + term.child.after
        term.submit("/exit")
        assert term.wait_exit() == 0


def test_prompt_and_commands_work_before_the_sdk_has_loaded(
    cli: Cli, api_env: FakeAnthropic, tmp_path: Path
) -> None:
    """The SDK import is held back until a gate file exists: the REPL must not wait for it."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    gate = tmp_path / "sdk-gate"
    (hooks / "sitecustomize.py").write_text(
        "import os, sys, time\n"
        "class HoldSdk:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'anthropic':\n"
        f"            while not os.path.exists({str(gate)!r}):\n"
        "                time.sleep(0.02)\n"
        "        return None\n"
        "sys.meta_path.insert(0, HoldSdk())\n"
    )
    cli.env["PYTHONPATH"] = str(hooks)
    api_env.stream_replies.append(text_reply("SDK arrived."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/help")
        term.expect(r"Ctrl\+D")
        term.submit("/memory")
        term.expect("No memories saved yet.")
        gate.touch()
        term.submit("hello there")
        term.expect("SDK arrived.")


def test_a_memory_start_up_failure_is_shown_once(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_memory_dir(str(project_dir)) / ".lock").mkdir(parents=True)  # the lock cannot be taken
    api_env.stream_replies.extend([text_reply("First answer."), text_reply("Second answer.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("hello")
        shown = term.expect(r"First answer\.")
        assert "Memory index not refreshed" in shown
        term.expect_prompt()
        term.submit("/clear")  # a new conversation builds its system prompt again
        term.expect_prompt()
        term.submit("hello again")
        shown = term.expect(r"Second answer\.")
        assert "Memory index not refreshed" not in shown
        term.expect_prompt()


def test_a_message_starting_with_a_path_goes_to_the_model(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("It maps host names."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/etc/hosts what is in it")
        shown = term.expect(r"It maps host names\.")
        assert "Unknown command" not in shown
        term.expect_prompt()
    assert api_env.requests[0].messages[-1]["content"][0]["text"] == "/etc/hosts what is in it"


def test_a_memory_start_up_failure_is_told_before_a_later_prompt_without_any_message(
    cli: Cli, project_dir: Path
) -> None:
    (project_memory_dir(str(project_dir)) / ".lock").mkdir(parents=True)  # the lock cannot be taken
    with cli.terminal() as term:
        term.wait_until_ready()
        shown = ""
        for command in ("/help", "/cost", "/model sonnet"):
            term.submit(command)
            shown += term.expect_prompt()
        assert shown.count("Memory index not refreshed") == 1
