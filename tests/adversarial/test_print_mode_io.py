"""Print mode's input and machine output against hostile material: an endless or binary stdin,
and model text or tool names full of what a terminal acts on, read back through --output-format
json / stream-json: stdin stays bounded, and no such character leaves raw while the JSON still
gives back the exact text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.ui.print.print_input import STDIN_MAX_BYTES
from tests.adversarial.cases import case
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply

# What a terminal would act on, or what hides or reorders text, one of each kind.
INVISIBLE = {
    "csi": "\x1b[2J",
    "osc52": "\x1b]52;c;cHduZWQ=\x07",
    "c1_csi": "\x9b31m",
    "del": "\x7f",
    "bidi_override": "\u202e",
    "zero_width": "\u200b",
    "line_separator": "\u2028",
    "tag_characters": "\U000e0041\U000e0042",
    "lone_surrogate": "\udcff",  # enters the conversation as U+FFFD (test_server_strings.py)
    "carriage_return": "over\rwrite",
}


def raw_chars_left(text: str) -> list[str]:
    """Characters of `text` that are neither printable nor a line break (JSON lines end with one)."""
    return [char for char in text if not char.isprintable() and char != "\n"]


@case("crashes", "stdin is /dev/zero (endless): refused after 5 MB with one line, nothing sent")
def test_endless_stdin_is_refused_at_the_cap(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    with open("/dev/zero", "rb") as zero:
        process = cli.start("-p", "summarize", stdin=zero, text=True)
        try:
            _, stderr = process.communicate(timeout=60)
        finally:
            process.kill()
    assert process.returncode == 2
    assert f"more than {STDIN_MAX_BYTES // 1_000_000} MB" in stderr
    assert api_env.requests == []


@pytest.mark.parametrize(
    "output_format",
    [
        pytest.param(
            f, marks=case("terminal", f"--output-format {f}: every invisible kind JSON-escaped, text exact")
        )
        for f in ("json", "stream-json")
    ],
)
def test_machine_output_escapes_every_invisible_kind(
    cli: Cli, api_env: FakeAnthropic, output_format: str
) -> None:
    text = " | ".join(f"{name}={chars}" for name, chars in INVISIBLE.items())
    api_env.stream_replies.append(text_reply(text, chunk_size=3))

    partial = ("--include-partial-messages",) if output_format == "stream-json" else ()
    result = cli.run_bytes("--output-format", output_format, *partial, "-p", "say it")

    out = result.stdout.decode("utf-8")  # strict: a raw lone surrogate could not even be written
    assert result.returncode == 0, result.stderr
    assert raw_chars_left(out) == []
    kept = text.replace("\udcff", "\ufffd")
    assert json.loads(out.splitlines()[-1])["result"] == kept
    if output_format == "stream-json":
        deltas = [json.loads(line)["event"] for line in out.splitlines() if '"text_delta"' in line]
        assert "".join(d["delta"]["text"] for d in deltas) == kept


# Printable by Unicode's rules, drawn as nothing: text mode writes them out, so JSON escapes them.
BLANK_LOOKING = ["\u115f", "\u1160", "\u3164", "\uffa0", "\u034f", "\u17b4", "\u17b5"]


@pytest.mark.parametrize(
    "output_format",
    [
        pytest.param(
            f, marks=case("terminal", f"{f}: each blank-looking filler escaped as text mode shows it")
        )
        for f in ("text", "json", "stream-json")
    ],
)
def test_blank_looking_characters_escaped_like_text_mode(
    cli: Cli, api_env: FakeAnthropic, output_format: str
) -> None:
    text = "name=" + "|".join(f"x{char}y" for char in BLANK_LOOKING)
    api_env.stream_replies.extend(
        [tool_reply("tool" + "".join(BLANK_LOOKING), {"path": text}), text_reply(text, chunk_size=2)]
    )

    result = cli.run("--output-format", output_format, "-p", "go")

    assert result.returncode == 0, result.stderr
    for char in BLANK_LOOKING:
        escape = f"\\u{ord(char):04x}"  # text mode's \u115f is JSON's \u115f too
        assert char not in result.stdout + result.stderr and escape in result.stdout, (char, output_format)
    if output_format != "text":
        events = [json.loads(line) for line in result.stdout.splitlines()]
        assert events[-1]["result"] == text  # the JSON still gives back the exact text


@case(
    "terminal",
    "stream-json: a tool name and input with escape codes reach stdout escaped, stderr made visible",
)
def test_hostile_tool_name_in_stream_json(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend(
        [tool_reply("evil\x1b[2J", {"path": "\x1b]0;title\x07"}), text_reply("done")]
    )

    result = cli.run("--output-format", "stream-json", "-p", "go")

    assert result.returncode == 0, result.stderr
    assert raw_chars_left(result.stdout) == [] and "\x1b" not in result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    [call] = [
        b
        for e in events
        if e["type"] == "assistant"
        for b in e["message"]["content"]
        if b["type"] == "tool_use"
    ]
    assert call["name"] == "evil\x1b[2J" and call["input"] == {"path": "\x1b]0;title\x07"}
    assert "evil\\x1b[2J" in result.stderr
