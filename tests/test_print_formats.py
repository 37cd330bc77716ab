"""Print mode for scripts: `--output-format json` and `stream-json` parsed as a script would, and
the exit status of every way a run can end."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from mini_claude.core.config import project_state_dir
from mini_claude.core.events import UsageReport
from mini_claude.llm.pricing import estimate_cost
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, error_reply, multi_tool_reply, text_reply, tool_reply
from tests.mcp_kit import processes_with, server_command, write_user_servers

HOSTILE_TEXT = "red \x1b[31mALERT\x1b[0m, csi \x9b2J, bidi \u202eevil, bell \x07 and 日本語 ✓"


def sessions_dir(project_dir: Path) -> Path:
    return project_state_dir(str(project_dir)) / "sessions"


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_json_is_one_object_with_the_answer_and_what_it_cost(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("apple\n")
    api_env.stream_replies.extend(
        [
            tool_reply("read_file", {"file_path": "a.txt"}, usage={"input_tokens": 100, "output_tokens": 10}),
            text_reply("It says apple.", usage={"input_tokens": 200, "output_tokens": 20}),
        ]
    )

    result = cli.run("--output-format", "json", "--model", "claude-sonnet-5-5", "-p", "what is in a.txt?")

    assert result.returncode == 0, result.stderr
    [answer] = json_lines(result.stdout)
    assert answer["type"] == "result" and answer["subtype"] == "success"
    assert answer["is_error"] is False and answer["exit_reason"] == "done" and answer["exit_code"] == 0
    assert answer["result"] == "It says apple." and answer["error"] is None
    assert answer["num_turns"] == 2
    [transcript] = sessions_dir(project_dir).glob("*.jsonl")  # the session it saved, to go on with -r
    assert answer["session_id"] == transcript.stem
    assert answer["usage"] == {
        "input_tokens": 300, "output_tokens": 30,
        "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0,
    }  # fmt: skip
    expected = estimate_cost("claude-sonnet-5-5", UsageReport(300, 30))
    assert expected is not None and answer["total_cost_usd"] == pytest.approx(expected)
    assert answer["permission_denials"] == []
    assert "read_file(a.txt)" in result.stderr  # the human lines stay on stderr


def test_an_unknown_model_has_no_cost(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("hi"))
    result = cli.run("--output-format", "json", "--model", "local-llama", "-p", "hello")
    [answer] = json_lines(result.stdout)
    assert answer["total_cost_usd"] is None and answer["usage"]["input_tokens"] == 12


def test_escape_codes_from_the_model_stay_json_escaped(cli: Cli, api_env: FakeAnthropic) -> None:
    for output_format in ("json", "stream-json"):
        api_env.stream_replies.append(text_reply(HOSTILE_TEXT, chunk_size=5))
        result = cli.run("--output-format", output_format, "-p", "say it")

        raw = result.stdout
        for char in "\x1b\x9b\u202e\x07":
            assert char not in raw, (output_format, char)
        assert "\\u001b[31m" in raw and "\\u009b" in raw and "\\u202e" in raw and "日本語 ✓" in raw
        assert json_lines(raw)[-1]["result"] == HOSTILE_TEXT  # the real text, not a visible copy


def test_stream_json_prints_claude_codes_lines(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    """What a script written for `claude -p --output-format stream-json --verbose` reads: the init
    line, an assistant line per reply (a message object with tool_use blocks and its usage), a user
    line carrying the tool results, the result line; nothing of another type."""
    (project_dir / "a.txt").write_text("apple\n")
    api_env.stream_replies.extend(
        [tool_reply("read_file", {"file_path": "a.txt"}, text="Reading."), text_reply("Apple.", chunk_size=2)]
    )

    result = cli.run("--output-format", "stream-json", "--verbose", "-p", "read it")

    assert result.returncode == 0, result.stderr
    lines = json_lines(result.stdout)
    assert [line["type"] for line in lines] == ["system", "assistant", "user", "assistant", "result"]
    init, first, results, second, last = lines
    assert init["subtype"] == "init" and init["cwd"] == str(project_dir) and "read_file" in init["tools"]
    assert init["permissionMode"] == "default" and init["model"] == "claude-sonnet-5-5"
    session = init["session_id"]
    assert all(line["session_id"] == session and line["uuid"] for line in lines)
    assert first["parent_tool_use_id"] is None and first["message"]["role"] == "assistant"
    [text, call] = first["message"]["content"]
    assert text == {"type": "text", "text": "Reading."} and call["type"] == "tool_use"
    assert call["name"] == "read_file" and call["input"] == {"file_path": "a.txt"}
    assert first["message"]["usage"]["output_tokens"] == 7 and first["message"]["type"] == "message"
    [answer] = results["message"]["content"]
    assert results["message"]["role"] == "user" and answer["type"] == "tool_result"
    assert answer["tool_use_id"] == call["id"] and "apple" in answer["content"]
    assert second["message"]["content"] == [{"type": "text", "text": "Apple."}]
    assert last["subtype"] == "success" and last["is_error"] is False and last["result"] == "Apple."
    assert last["num_turns"] == 2 and last["session_id"] == session and "duration_api_ms" in last


def test_partial_messages_stream_the_text_as_stream_events(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend(
        [tool_reply("list_files", {"pattern": "*"}, text="Looking."), text_reply("Nothing.", chunk_size=2)]
    )

    result = cli.run("--output-format", "stream-json", "--verbose", "--include-partial-messages", "-p", "go")

    assert result.returncode == 0, result.stderr
    events = [line["event"] for line in json_lines(result.stdout) if line["type"] == "stream_event"]
    assert all(e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta" for e in events)
    assert "".join(e["delta"]["text"] for e in events) == "Looking.Nothing."
    assert {e["index"] for e in events if e["delta"]["text"] in "Looking."} == {0}
    without = cli.run("--output-format", "json", "--include-partial-messages", "-p", "go")
    assert without.returncode == 2 and "goes with --output-format stream-json" in without.stderr


def test_a_refusal_is_listed_and_the_run_still_succeeds(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    call = ("write_file", {"file_path": "x.txt", "content": "x"})
    api_env.stream_replies.extend([multi_tool_reply([call]), text_reply("I could not write it.")])

    result = cli.run("--output-format", "json", "-p", "write x.txt")

    assert result.returncode == 0, result.stderr
    [answer] = json_lines(result.stdout)
    [denial] = answer["permission_denials"]
    assert denial["tool_name"] == "write_file" and denial["tool_input"] == {
        "file_path": "x.txt",
        "content": "x",
    }
    assert answer["is_error"] is False and not (project_dir / "x.txt").exists()


@pytest.mark.parametrize(
    ("flags", "mode", "tool"),
    [
        (("--permission-mode", "plan"), "plan", "write_file"),
        (("--permission-mode", "acceptEdits", "--disallowedTools", "Bash"), "acceptEdits", "run_shell"),
    ],
    ids=["plan", "rule"],
)
def test_stream_json_names_the_mode_as_claude_code_does_and_lists_what_was_refused(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, flags: tuple[str, ...], mode: str, tool: str
) -> None:
    calls = {"write_file": {"file_path": "x.txt", "content": "x"}, "run_shell": {"command": "touch x.txt"}}
    call = calls[tool]
    api_env.stream_replies.extend([tool_reply(tool, call), text_reply("Not allowed here.")])

    result = cli.run(*flags, "--output-format", "stream-json", "--verbose", "-p", "make x.txt")

    assert result.returncode == 0, result.stderr
    lines = json_lines(result.stdout)
    init, last = lines[0], lines[-1]
    assert init["permissionMode"] == mode
    [refused] = [block for line in lines if line["type"] == "user" for block in line["message"]["content"]]
    assert refused["is_error"] is True
    [denial] = last["permission_denials"]
    assert denial == {"tool_name": tool, "tool_use_id": refused["tool_use_id"], "tool_input": call}
    assert last["is_error"] is False and not (project_dir / "x.txt").exists()


def test_stream_json_init_names_the_mcp_servers_and_their_tools_and_comes_first(
    cli: Cli, api_env: FakeAnthropic, isolated_env: Path
) -> None:
    marker = f"stream-init-{uuid.uuid4().hex[:8]}"
    servers = {"answers": server_command("answers", marker), "broken": {"command": "/nonexistent/mcp-server"}}
    write_user_servers(isolated_env, servers)
    api_env.stream_replies.append(text_reply("Hi."))

    result = cli.run("--output-format", "stream-json", "--verbose", "-p", "hi", timeout=60)

    assert result.returncode == 0, result.stderr
    lines = json_lines(result.stdout)
    init = lines[0]
    assert init["subtype"] == "init" and "mcp__answers__echo" in init["tools"]
    assert sorted(init["mcp_servers"], key=lambda s: s["name"]) == [
        {"name": "answers", "status": "connected"},
        {"name": "broken", "status": "failed"},
    ]
    notices = [line for line in lines if line.get("subtype") == "notice"]
    assert any("broken" in line["text"] for line in notices)  # told after the init line, not before
    assert all(line["session_id"] == init["session_id"] != "" for line in lines)
    assert processes_with(marker) == []


# ------------------------------------------------------------------ exit codes


def test_api_error_exits_1_and_json_names_it(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(error_reply(400, message="prompt is too long"))

    result = cli.run("--output-format", "json", "-p", "hello")

    assert result.returncode == 1
    [answer] = json_lines(result.stdout)
    assert answer["subtype"] == "error_during_execution" and answer["is_error"] is True
    assert answer["exit_code"] == 1 and "prompt is too long" in answer["error"]


def test_turn_cap_exits_3(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_dir / "a.txt").write_text("a\n")
    api_env.stream_replies.append(tool_reply("read_file", {"file_path": "a.txt"}, text="Looking."))

    text = cli.run("--max-turns", "1", "-p", "look")
    api_env.stream_replies.append(tool_reply("read_file", {"file_path": "a.txt"}))
    as_json = cli.run("--max-turns", "1", "--output-format", "json", "-p", "look")

    assert text.returncode == 3 and "Stopped after 1 model call in one turn" in text.stderr
    assert text.stdout == "Looking.\n"
    [answer] = json_lines(as_json.stdout)
    assert as_json.returncode == 3 and answer["subtype"] == "error_max_turns"
    assert answer["exit_reason"] == "turn_cap" and "--max-turns" in answer["error"]


def test_a_reply_cut_at_max_tokens_exits_4(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("The beginning of", stop_reason="max_tokens"))

    result = cli.run("--output-format", "json", "-p", "write a lot")

    assert result.returncode == 4
    [answer] = json_lines(result.stdout)
    assert answer["subtype"] == "error_max_tokens" and answer["result"] == "The beginning of"
    assert "MINI_CLAUDE_MAX_TOKENS" in answer["error"]


def test_a_refusal_is_its_own_subtype_and_exits_5(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("Here is how to", stop_reason="refusal"))
    text = cli.run("-p", "something it will not do")
    api_env.stream_replies.append(text_reply("Here is how to", stop_reason="refusal"))
    as_json = cli.run("--output-format", "json", "-p", "something it will not do")

    assert text.returncode == 5 and text.stdout == ""  # the refused text is not the answer
    assert "declined to go on (stop reason: refusal)" in text.stderr
    [answer] = json_lines(as_json.stdout)
    assert as_json.returncode == 5 and answer["is_error"] is True
    assert answer["subtype"] == "error_refusal" and answer["exit_reason"] == "refused"
    assert "refusal" in answer["error"] and answer["result"] == ""


def test_usage_errors_exit_2(cli: Cli) -> None:
    assert cli.run("--output-format", "yaml", "-p", "x").returncode == 2
    assert cli.run("-p", stdin="").returncode == 2
