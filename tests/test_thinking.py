"""Extended thinking against the fake server, which signs the thinking it sends and refuses a
request that drops or alters it where the API requires it back: asked for with --thinking, the
settings files and /think; sent back exactly across a tool call, a resume and a compaction;
redacted thinking passed through; shown collapsed (Ctrl+O's transcript view shows it); a model that takes no
budget asked adaptively."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent_harness import Harness, assert_next_turn_works
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, Reply, text_reply, tool_reply
from tests.fake_api_thinking import redacted_thinking_block, thinking_block
from tests.fake_api_validation import validate_request
from tests.kit import main_calls

THOUGHT = "The user wants a.txt; I should read it before answering."
ENABLED = {"type": "enabled", "budget_tokens": 8000}


def thinking_then_call(*thinking: dict[str, Any], name: str = "read_file", **tool_input: Any) -> Reply:
    """A reply that thinks, then calls a tool (read a.txt unless told otherwise)."""
    reply = tool_reply(name, tool_input or {"file_path": "a.txt"})
    reply.blocks[:0] = list(thinking)
    return reply


def thinking_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b["type"] in ("thinking", "redacted_thinking")]


def test_thinking_goes_back_unchanged_with_the_tool_results_and_after_a_resume(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("apple\n")
    thought = thinking_block(THOUGHT)
    api_env.stream_replies.extend([thinking_then_call(thought), text_reply("It says apple.")])

    first = cli.run("-p", "--thinking", "what does a.txt say?")

    assert first.returncode == 0, first.stderr
    assert first.stdout == "It says apple.\n"  # the text format carries the answer alone
    asked, answered = main_calls(api_env)
    assert (
        asked.body["thinking"] == ENABLED
        and asked.messages[0]["content"][0]["text"] == "what does a.txt say?"
    )
    assert answered.validation_error is None  # the fake checks the signed block came back with the result
    assert thinking_of(answered.messages[1]) == [thought]

    api_env.stream_replies.append(text_reply("Still apple."))
    second = cli.run("-c", "-p", "and now?")

    assert second.returncode == 0, second.stderr
    resumed = main_calls(api_env)[-1]
    assert resumed.validation_error is None
    assert thinking_of(resumed.messages[1]) == [thought]  # reloaded from the transcript as it was
    assert "thinking" not in resumed.body  # this run did not ask for thinking


def test_the_fake_refuses_thinking_dropped_or_changed_beside_tool_results() -> None:
    """What makes the tests above able to fail: the server's checks, on requests made by hand."""
    thought = thinking_block(THOUGHT)
    call = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "apple"}

    def request(*assistant: dict[str, Any]) -> dict[str, Any]:
        return {
            "model": "m", "max_tokens": 16000, "thinking": ENABLED,
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "read it"}]},
                {"role": "assistant", "content": list(assistant)},
                {"role": "user", "content": [result]},
            ],
        }  # fmt: skip

    issued = {"toolu_1": [thought]}
    assert validate_request(request(thought, call), issued) is None
    assert "passed back unchanged" in str(validate_request(request(call), issued))
    altered = {**thought, "thinking": THOUGHT + " And more."}
    assert "Invalid `signature`" in str(validate_request(request(altered, call), issued))


def test_redacted_thinking_is_passed_through_as_it_came(harness: Harness, api_env: FakeAnthropic) -> None:
    (harness.session.settings.project_dir / "a.txt").write_text("apple\n")
    redacted, thought = redacted_thinking_block(), thinking_block(THOUGHT)
    api_env.stream_replies.extend([thinking_then_call(redacted, thought), text_reply("Apple.")])

    ended = harness.turn("what does a.txt say?")

    assert ended.reason == "done", harness.events
    answered = main_calls(api_env)[1]
    assert answered.validation_error is None
    assert thinking_of(answered.messages[1]) == [redacted, thought]
    assert thinking_of(harness.session.agent.messages[1]) == [redacted, thought]


def test_stream_json_shows_thinking_in_claude_codes_shape(cli: Cli, api_env: FakeAnthropic) -> None:
    thought = thinking_block("Two and two make four.")
    api_env.stream_replies.append(Reply(blocks=[thought, {"type": "text", "text": "Four."}]))

    result = cli.run("-p", "--thinking", "--output-format", "stream-json", "2+2?")

    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    [reply] = [line["message"] for line in lines if line["type"] == "assistant"]
    assert reply["content"] == [thought, {"type": "text", "text": "Four."}]
    assert lines[-1]["result"] == "Four."


def test_a_model_that_takes_no_budget_is_asked_adaptively_from_then_on(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("apple\n")
    api_env.thinking_types = ("adaptive", "between_tools")  # as Claude Sonnet 5.5 takes them
    api_env.stream_replies.extend([thinking_then_call(thinking_block(THOUGHT)), text_reply("Apple.")])

    result = cli.run("-p", "--thinking", "what does a.txt say?")

    assert result.returncode == 0, result.stderr
    refused, *asked = main_calls(api_env)
    assert "thinking.type.enabled" in str(refused.validation_error)
    assert [call.body["thinking"] for call in asked] == [{"type": "adaptive", "display": "summarized"}] * 2
    assert all(call.validation_error is None for call in asked)
    assert result.stderr.count("takes no thinking budget: it thinks adaptively") == 1
    assert result.stdout == "Apple.\n"


def test_the_budget_is_checked_and_max_tokens_leaves_room_for_the_answer(
    cli: Cli, api_env: FakeAnthropic
) -> None:
    too_small = cli.run("-p", "--thinking", "500", "hi")
    assert too_small.returncode == 2
    assert "at least 1,024 tokens" in too_small.stderr and api_env.requests == []

    api_env.stream_replies.append(text_reply("ok"))
    big = cli.run("-p", "--thinking", "20,000", "hi")

    assert big.returncode == 0, big.stderr
    [asked] = main_calls(api_env)
    assert asked.body["thinking"] == {"type": "enabled", "budget_tokens": 20000}
    assert asked.body["max_tokens"] == 24096  # the budget and 4,096 for the answer
    assert "replies may take up to 24,096 tokens" in big.stderr


def test_a_bare_thinking_flag_leaves_the_next_words_to_the_prompt(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("ok"))

    result = cli.run("-p", "--thinking", "fix", "the", "tests")

    assert result.returncode == 0, result.stderr
    [asked] = main_calls(api_env)
    assert asked.messages[0]["content"][0]["text"] == "fix the tests"
    assert asked.body["thinking"] == ENABLED


def test_the_settings_files_turn_thinking_on_and_the_flag_wins(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    user_file = isolated_env / ".claude" / "settings.json"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(json.dumps({"alwaysThinkingEnabled": True}))  # Claude Code's key
    project_file = project_dir / ".mini-claude" / "settings.json"
    project_file.parent.mkdir()
    project_file.write_text(json.dumps({"thinking": 12000}))
    api_env.stream_replies.extend([text_reply("ok"), text_reply("ok"), text_reply("ok")])

    assert cli.run("-p", "hi").returncode == 0
    assert cli.run("-p", "--thinking", "off", "hi").returncode == 0
    project_file.write_text(json.dumps({"thinking": "lots"}))
    wrong = cli.run("-p", "hi")

    with_file, off, after_wrong = main_calls(api_env)
    assert with_file.body["thinking"] == {"type": "enabled", "budget_tokens": 12000}
    assert "thinking" not in off.body
    assert after_wrong.body["thinking"] == ENABLED  # the user's file still counts
    assert (
        "thinking must be true, false or a thinking budget of at least 1,024 tokens: ignored" in wrong.stderr
    )


def test_think_switches_it_and_the_thinking_shows_collapsed_and_whole(
    cli: Cli, api_env: FakeAnthropic
) -> None:
    api_env.stream_replies.extend(
        [Reply(blocks=[thinking_block("Two plus two is four, simple."), {"type": "text", "text": "Four."}]),
         text_reply("Five.")]
    )  # fmt: skip
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/think")
        term.expect(r"Thinking on: the model thinks first, up to 8,000 tokens")
        term.expect_prompt()
        term.submit("what is 2+2?")
        term.expect(r"Thinking, 6 words \(Ctrl\+O shows it\)")
        term.expect("Four.")
        term.expect_prompt()
        term.ctrl("o")  # the transcript view: the thinking in full, above the reply
        term.expect(r"Two plus two is four, simple\.[\s\S]*Four\.")  # only there is the thinking itself
        term.type("q")
        term.expect_prompt()
        term.submit("/think")
        term.expect("Thinking off")
        term.expect_prompt()
        term.submit("and 2+3?")
        term.expect("Five.")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0
    thinking, plain = main_calls(api_env)
    assert thinking.body["thinking"] == ENABLED
    assert "thinking" not in plain.body and plain.validation_error is None
    assert thinking_of(plain.messages[1]) == [thinking_block("Two plus two is four, simple.")]


def test_after_a_compaction_the_stale_thinking_of_kept_turns_is_left_out(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    harness = Harness().start(thinking=8000)
    (project_dir / "a.txt").write_text("apple\n")
    thought = thinking_block(THOUGHT)
    api_env.stream_replies.extend([
        text_reply("Hello."), thinking_then_call(thought), text_reply("Apple."), text_reply("Sure."),
        text_reply("We said hello, then read a.txt."), text_reply("Done."),
    ])  # fmt: skip
    for text in ("hello", "what does a.txt say?", "thanks"):
        assert harness.turn(text).reason == "done", harness.events
    before = main_calls(api_env)[-1]
    assert thinking_of(before.messages[3]) == [thought]  # nothing changed before it: sent as it came

    assert harness.session.agent.compact() is not None
    assert harness.turn("go on").reason == "done", harness.events

    summary_request, after = main_calls(api_env)[-2:]
    assert not any(thinking_of(m) for m in summary_request.messages if m["role"] == "assistant")
    assert summary_request.validation_error is None and after.validation_error is None
    kept_call = next(m for m in after.messages if any(b["type"] == "tool_use" for b in m["content"]))
    assert thinking_of(kept_call) == []  # its prefix is now the summary: the API would not take it
    assert thinking_of(harness.session.agent.messages[3]) == [thought]  # the conversation keeps it


def test_thinking_cut_off_before_its_signature_is_not_kept(harness: Harness, api_env: FakeAnthropic) -> None:
    cut = Reply(blocks=[thinking_block(THOUGHT * 4), {"type": "text", "text": "Hi."}], drop_after=5)
    api_env.stream_replies.append(cut)

    ended = harness.turn("hello")

    assert ended.reason == "error"
    assert not any(thinking_of(m) for m in harness.session.agent.messages if m["role"] == "assistant")
    assert_next_turn_works(harness, api_env)
