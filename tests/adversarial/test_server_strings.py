"""Strings from the model server that UTF-8 cannot carry: a lone surrogate is valid JSON
(`"\\ud800"`), and one kept in the conversation made every later request fail to encode and
every `-c` of the saved session fail the same way. Each enters as U+FFFD wherever it came in
(text, a text delta holding half a pair, a tool name, an input key, a nested input value), in
the agent, the REPL and print mode; a transcript an older version saved with one loads cleaned.
Every request after it is one the fake (which refuses a body UTF-8 cannot encode) accepts."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from mini_claude.core.config import memory_project_root, project_sessions_dir
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.sessions.transcript.writer import TranscriptWriter
from tests.adversarial.cases import case
from tests.agent_harness import Harness, assert_next_turn_works
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, Reply, text_reply, tool_reply
from tests.kit import main_calls

REPLACEMENT = "\ufffd"


def has_surrogate(value: Any) -> bool:
    return any(0xD800 <= ord(char) <= 0xDFFF for char in json.dumps(value, ensure_ascii=False))


def raw_tool_call(name: str, raw_json: str) -> Reply:
    return tool_reply(name, {}, partial_tool_json=raw_json, chunk_size=5)


# Where the server puts it, and what the conversation must then hold instead.
PLACEMENTS: dict[str, tuple[Reply, str]] = {
    "text": (text_reply("a\ud800b"), "a\ufffdb"),
    "low_half_alone": (text_reply("a\udfffb"), "a\ufffdb"),
    "pair_split_across_text_deltas": (text_reply("x\ud83d\ude00y", chunk_size=1), "x\ufffd\ufffdy"),
    "tool_name": (tool_reply("read\ud800file", {"file_path": "a.txt"}), "read\ufffdfile"),
    "input_key": (raw_tool_call("read_file", '{"file_path": "a.txt", "k\\ud800": 1}'), '"k\ufffd"'),
    "input_value": (raw_tool_call("read_file", '{"file_path": "x\\ud800.txt"}'), "x\ufffd.txt"),
    "nested_input_value": (
        raw_tool_call("read_file", '{"file_path": "a.txt", "n": [{"deep": ["v\\udc00"]}]}'),
        "v\ufffd",
    ),
    # Split across input_json_delta events the escapes are joined before parsing: a whole pair.
    "pair_split_across_json_deltas": (
        raw_tool_call("read_file", '{"file_path": "\\ud83d\\ude00.txt"}'),
        "\U0001f600.txt",
    ),
}


@pytest.mark.parametrize(
    "placement",
    [
        pytest.param(
            name, marks=case("server", "becomes U+FFFD where it enters; the next request validates"), id=name
        )
        for name in PLACEMENTS
    ],
)
def test_unencodable_server_string_never_enters_the_conversation(
    api_env: FakeAnthropic, project_dir: Path, placement: str
) -> None:
    (project_dir / "a.txt").write_text("hello\n")
    reply, stored = PLACEMENTS[placement]
    api_env.stream_replies.extend([reply, text_reply("answered")])
    harness = Harness().start(permission_mode="bypass")

    ended = harness.turn("go")

    assert ended.reason == "done", harness.events
    assert not has_surrogate([vars(event) for event in harness.events if hasattr(event, "__dict__")])
    assert_next_turn_works(harness, api_env)
    sent = main_calls(api_env)[-1]
    assert not has_surrogate(sent.messages)
    assert stored in json.dumps(sent.messages[1], ensure_ascii=False)


@pytest.fixture
def cli(api_env: FakeAnthropic, project_dir: Path) -> Cli:
    return Cli(project_dir)


def surrogate_replies() -> list[Reply]:
    return [
        raw_tool_call("read_file", '{"file_path": "x\\ud800.txt", "note": "\\udcff"}'),
        text_reply("a\ud800b"),
    ]


@case("server", "print mode (text, stream-json) goes on after such a reply; `-c` of its session works")
@pytest.mark.parametrize("output_format", ["text", "stream-json"])
def test_print_mode_and_continue_after_a_lone_surrogate(
    cli: Cli, api_env: FakeAnthropic, output_format: str
) -> None:
    api_env.stream_replies.extend([*surrogate_replies(), text_reply("still here")])

    first = cli.run("-p", "go", "--output-format", output_format)
    again = cli.run("-c", "-p", "and again")

    assert first.returncode == 0, first.stderr
    assert "a\ufffdb" in (first.stdout if output_format == "text" else "".join(
        json.loads(line).get("result", "") + json.dumps(json.loads(line), ensure_ascii=False)
        for line in first.stdout.splitlines()
    ))  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert again.stdout == "still here\n"
    assert [r.validation_error for r in main_calls(api_env)] == [None, None, None]
    assert not has_surrogate(main_calls(api_env)[-1].messages)


@case("server", "`-c` on a transcript an older version saved with lone surrogates: loads as U+FFFD, goes on")
def test_continue_on_a_transcript_holding_lone_surrogates(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    writer = TranscriptWriter(
        project_sessions_dir(project_dir),
        cwd=project_dir,
        project=memory_project_root(project_dir),
        model="m",
    )
    writer.add("user", [{"type": "text", "text": "hi"}])
    writer.add(
        "assistant",
        [
            {"type": "text", "text": "a\ud800b"},
            {"type": "tool_use", "id": "toolu_1", "name": "read\udfff", "input": {"k\ud800": ["\udcff"]}},
        ],
    )
    writer.add("tool_results", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "r\ud800"}])
    writer.close()
    assert b"\\ud800" in writer.path.read_bytes()  # saved as the old versions saved it
    api_env.stream_replies.append(text_reply("continued"))

    result = cli.run("-c", "-p", "go on")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "continued\n"
    [sent] = main_calls(api_env)
    assert sent.validation_error is None and not has_surrogate(sent.messages)
    assert {"type": "text", "text": "a\ufffdb"} in sent.messages[1]["content"]
    assert not has_surrogate(load_transcript(writer.path).messages)


@case("server", "REPL in a pty: a reply with a lone surrogate is shown with U+FFFD; the next turns work")
def test_repl_goes_on_after_a_lone_surrogate(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([*surrogate_replies(), text_reply("second ok"), text_reply("third ok")])
    with cli.terminal() as term:
        raw = io.StringIO()
        term.child.logfile_read = raw
        term.wait_until_ready()
        term.submit("hello")
        first = term.expect_prompt()
        term.submit("again")
        second = term.expect_prompt()
        term.submit("third")
        third = term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0

    assert "a\ufffdb" in first and "second ok" in second and "third ok" in third
    assert [r.validation_error for r in main_calls(api_env)] == [None, None, None, None]
    assert "rror" not in second + third
