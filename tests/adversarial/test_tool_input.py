"""Hostile tool input from the model server: numbers that are not JSON (NaN, Infinity, 1e999),
input nested or sized to break the next request, and tool_use ids that repeat or that the API
would refuse. Each call is answered on its own (run, or refused without running), and every later
request is one the real API accepts: the fake validates each of them strictly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mini_claude.core.errors import ToolError
from mini_claude.core.events import ToolFinished, UsageReport
from mini_claude.tools import shell
from tests.adversarial.cases import case
from tests.agent_harness import Harness, assert_next_turn_works
from tests.fake_api import FakeAnthropic, Reply, multi_tool_reply, text_reply, tool_reply
from tests.kit import main_calls, result_text
from tests.tool_harness import Tools


@pytest.fixture
def harness(api_env: FakeAnthropic, project_dir: Path) -> Harness:
    return Harness().start(permission_mode="bypass")  # a call that slipped through would run


def tool_blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [block for block in message["content"] if block.get("type") == kind]


def write_call(file_name: str, raw_json: str) -> Reply:
    """A write_file call whose input arrives as this raw JSON text."""
    return tool_reply("write_file", {"file_path": file_name, "content": "x"}, partial_tool_json=raw_json)


HOSTILE_INPUTS = {
    "nan": '{"file_path": "x.txt", "content": "data", "n": NaN}',
    "infinity": '{"file_path": "x.txt", "content": "data", "n": Infinity}',
    "minus_infinity": '{"file_path": "x.txt", "content": "data", "n": -Infinity}',
    "overflowing_float": '{"file_path": "x.txt", "content": "data", "n": 1e999}',
    "nan_deep_inside": '{"file_path": "x.txt", "content": "data", "n": [1, {"m": [NaN]}]}',
    "nan_as_shell_timeout": '{"command": "touch x.txt", "timeout": NaN}',
    "int_of_5000_digits": '{"file_path": "x.txt", "content": "data", "n": ' + "9" * 5000 + "}",
    "nested_900_deep": '{"file_path": "x.txt", "content": "data", "n": ' + "[" * 900 + "]" * 900 + "}",
    "nested_100000_deep": '{"file_path": "x.txt", "n": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "array_not_object": '["x.txt", "data"]',
    "json_then_garbage": '{"file_path": "x.txt", "content": "data"} {"more": 1}',
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            name,
            marks=case("server", "not run, answered 'not a valid JSON object', stored as {}; next turn ok"),
            id=name,
        )
        for name in HOSTILE_INPUTS
    ],
)
def test_tool_input_that_is_not_strict_json(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path, name: str
) -> None:
    raw = HOSTILE_INPUTS[name]
    tool = "run_shell" if "command" in raw else "write_file"
    # The 200 KB nesting in 4 KB deltas, not 12,500 of the usual 16 characters: the deltas are
    # joined before the input is parsed, so their size only sets how many events the SDK decodes.
    chunk = 4096 if len(raw) > 100_000 else 16
    reply = tool_reply(tool, {}, partial_tool_json=raw, chunk_size=chunk)
    api_env.stream_replies.extend([reply, text_reply("Sorry, again with valid JSON.")])

    ended = harness.turn("write x.txt please")

    assert ended.reason == "done", harness.events
    assert not (project_dir / "x.txt").exists()
    [finished] = harness.of_type(ToolFinished)
    assert finished.is_error and finished.summary == "not run"
    second = main_calls(api_env)[1]
    assert second.validation_error is None
    [stored] = tool_blocks(second.messages[1], "tool_use")
    assert stored["input"] == {}
    [result] = tool_blocks(second.messages[2], "tool_result")
    assert result["is_error"] is True and "not a valid JSON object" in result_text(result)
    assert "NaN and Infinity are not JSON numbers" in result_text(result)
    assert_next_turn_works(harness, api_env)


@case("server", "a 31-digit integer and the text 'NaN' are valid input: the call runs (timeout lowered)")
def test_strict_parsing_keeps_ordinary_numbers(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    raw = '{"command": "printf %s NaN > x.txt", "timeout": 1' + "0" * 30 + "}"  # lowered to the maximum
    api_env.stream_replies.extend([tool_reply("run_shell", {}, partial_tool_json=raw), text_reply("Done.")])

    harness.turn("write x.txt please")

    assert (project_dir / "x.txt").read_text() == "NaN"
    [result] = tool_blocks(main_calls(api_env)[1].messages[2], "tool_result")
    assert "is_error" not in result, result_text(result)
    assert result_text(result).startswith("(timeout lowered to the maximum")
    assert_next_turn_works(harness, api_env)


def same_id(reply: Reply, tool_id: str) -> Reply:
    for block in reply.blocks:
        if block["type"] == "tool_use":
            block["id"] = tool_id
    return reply


@case("server", "3 calls with one id: the first runs, the others are answered 'reused the id', not run")
def test_repeated_tool_use_id_in_one_response(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    calls = [("write_file", {"file_path": f"{name}.txt", "content": name}) for name in ("a", "b", "c")]
    api_env.stream_replies.extend([same_id(multi_tool_reply(calls), "toolu_same"), text_reply("Done.")])

    ended = harness.turn("write three files")

    assert ended.reason == "done"
    assert (project_dir / "a.txt").read_text() == "a"
    assert not (project_dir / "b.txt").exists() and not (project_dir / "c.txt").exists()
    second = main_calls(api_env)[1]
    assert second.validation_error is None
    uses = tool_blocks(second.messages[1], "tool_use")
    results = tool_blocks(second.messages[2], "tool_result")
    assert uses[0]["id"] == "toolu_same" and len({use["id"] for use in uses}) == 3
    assert [r["tool_use_id"] for r in results] == [use["id"] for use in uses]
    assert "is_error" not in results[0]
    for refused in results[1:]:
        assert refused["is_error"] is True and "reused the id of an earlier tool call" in result_text(refused)
    assert_next_turn_works(harness, api_env)


@case("server", "an id reused from an earlier turn (or model call): not run, new id, conversation valid")
@pytest.mark.parametrize("when", ["next_turn", "same_turn"])
def test_tool_use_id_reused_from_earlier(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path, when: str
) -> None:
    first = tool_reply("write_file", {"file_path": "a.txt", "content": "a"}, id="toolu_once")
    again = tool_reply("write_file", {"file_path": "b.txt", "content": "b"}, id="toolu_once")
    if when == "same_turn":
        api_env.stream_replies.extend([first, again, text_reply("Done.")])
        harness.turn("write two files")
    else:
        api_env.stream_replies.extend([first, text_reply("Wrote a."), again, text_reply("Done.")])
        harness.turn("write a.txt")
        harness.turn("now b.txt")

    assert (project_dir / "a.txt").exists() and not (project_dir / "b.txt").exists()
    last = main_calls(api_env)[-1]
    assert last.validation_error is None
    *_, asked, answered = last.messages
    [use] = tool_blocks(asked, "tool_use")
    [result] = tool_blocks(answered, "tool_result")
    assert use["id"] != "toolu_once" and result["tool_use_id"] == use["id"]
    assert result["is_error"] is True and "reused the id" in result_text(result)
    assert_next_turn_works(harness, api_env)


@case("server", "an id with characters the API refuses, or an empty one, is rewritten; the call runs")
@pytest.mark.parametrize("tool_id", ["call.1:abc/ü", "", "toolu_ok|x"])
def test_tool_use_id_the_api_would_refuse(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path, tool_id: str
) -> None:
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": "a.txt", "content": "a"}, id=tool_id), text_reply("Done.")]
    )

    harness.turn("write a.txt")

    assert (project_dir / "a.txt").read_text() == "a"
    second = main_calls(api_env)[1]
    assert second.validation_error is None
    [use] = tool_blocks(second.messages[1], "tool_use")
    [result] = tool_blocks(second.messages[2], "tool_result")
    assert result["tool_use_id"] == use["id"] and "is_error" not in result
    assert_next_turn_works(harness, api_env)


@case("server", "token counts of NaN, Infinity or text in usage count as 0; the reply arrives, no error")
def test_usage_numbers_that_are_not_json(harness: Harness, api_env: FakeAnthropic) -> None:
    # The fake writes these with json.dumps, which emits NaN and Infinity as bare words.
    usage = {"input_tokens": float("nan"), "output_tokens": float("inf"), "cache_read_input_tokens": "lots"}
    api_env.stream_replies.append(text_reply("Hello.", usage=usage))

    ended = harness.turn("hi")

    assert ended.reason == "done" and ended.final_text == "Hello."
    [report] = harness.of_type(UsageReport)
    # output_tokens: the final Infinity counts as 0, so the count from message_start (1) stands.
    assert report == UsageReport(input_tokens=0, output_tokens=1, cache_read_tokens=0)
    assert_next_turn_works(harness, api_env)


SHELL_TIMEOUTS = {
    "nan": (float("nan"), "must be a finite number"),
    "infinity": (float("inf"), "must be a finite number"),
    "minus_infinity": (float("-inf"), "must be a finite number"),
}


@case("server", "run_shell timeout NaN / ±Infinity is refused by the schema check; nothing runs")
@pytest.mark.parametrize("name", SHELL_TIMEOUTS)
def test_shell_timeout_not_finite(project_dir: Path, name: str) -> None:
    timeout, problem = SHELL_TIMEOUTS[name]

    result = Tools(project_dir, "bypass").run("run_shell", command="touch ran", timeout=timeout)

    assert result.is_error and problem in result.content
    assert not (project_dir / "ran").exists()


@case("server", "run_shell itself refuses a NaN timeout (reached past the schema), never runs without one")
def test_shell_handler_refuses_nan_timeout(project_dir: Path) -> None:
    tools = Tools(project_dir, "bypass")

    with pytest.raises(ToolError, match="not a number of seconds"):
        shell.run_shell(tools.ctx, "touch ran", timeout=float("nan"))

    assert not (project_dir / "ran").exists()


@case("server", "a timeout of 10**400 (too big for a float) is lowered to the maximum, not a crash")
def test_shell_timeout_huge_integer(project_dir: Path) -> None:
    result = Tools(project_dir, "bypass").run("run_shell", command="echo hi", timeout=10**400)

    assert not result.is_error, result.content
    lowered = f"(timeout lowered to the maximum of {shell.MAX_TIMEOUT_S:g} seconds)"
    assert result.content.startswith(f"{lowered}\nhi")
