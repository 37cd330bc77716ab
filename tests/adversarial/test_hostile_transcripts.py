"""Resuming hostile transcripts: escape codes saved in a conversation (the first message, a reply,
a tool call) shown by the list of sessions and the resumed screen; lines corrupted in every way
a crash or an editor can; transcripts replaced by a FIFO or a symlink; ids typed with escape codes.
Each is written out, named in one line or refused; none reaches the terminal, hangs, or makes the
next request one the API refuses."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from mini_claude.core.config import memory_project_root, project_sessions_dir
from mini_claude.sessions.transcript.writer import TranscriptWriter
from tests.adversarial.cases import case
from tests.adversarial.test_terminal_escapes import (
    BIDI,
    C1_CSI,
    C1_OSC,
    CLEAR_SCREEN,
    CLIPBOARD,
    HOSTILE,
    assert_nothing_foreign,
)
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply

SHOWN = [CLEAR_SCREEN[1], CLIPBOARD[1], C1_CSI[1], C1_OSC[1], BIDI[1]]
RULE = r"resumed session [0-9a-f]{12}"


def transcript(project: Path, records: list[tuple[str, list[dict[str, Any]]]], session_id: str = "") -> Path:
    writer = TranscriptWriter(
        project_sessions_dir(project), cwd=project, project=memory_project_root(project), model="m",
        session_id=session_id or None,
    )  # fmt: skip
    for kind, blocks in records:
        writer.add(kind, blocks)
    writer.close()
    return writer.path


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


def hostile_session(project: Path) -> Path:
    call = {
        "type": "tool_use",
        "id": "toolu_evil",
        "name": f"evil{CLIPBOARD[0]}",
        "input": {"command": HOSTILE},
    }
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_evil",
        "content": f"no {HOSTILE}",
        "is_error": True,
    }
    return transcript(
        project,
        [
            ("user", text(f"first {HOSTILE} message")),
            ("assistant", [*text(f"## Reply\n\nreply {HOSTILE} text"), call]),
            ("tool_results", [result]),
            ("assistant", text(f"after {CLEAR_SCREEN[0]} the tool")),
        ],
    )


@case("terminal", "escape codes in a saved first message: written out in the list of sessions (`-r`)")
def test_the_list_of_sessions_writes_out_a_hostile_first_message(cli: Cli, project_dir: Path) -> None:
    hostile_session(project_dir)
    with cli.terminal("-r", columns=400) as term:
        raw = io.StringIO()
        term.child.logfile_read = raw
        shown = term.expect(r"1/1")
        term.type("\x1b")
        term.expect("No session resumed.")
        term.wait_exit()

    assert_nothing_foreign(raw.getvalue())
    for written_out in SHOWN:
        assert written_out in shown, written_out


@case("terminal", "the resumed screen (`-c`): the user's message, the reply, a tool's name, argument, result")
def test_the_resumed_screen_writes_out_hostile_text(cli: Cli, project_dir: Path) -> None:
    hostile_session(project_dir)
    with cli.terminal("-c", columns=400) as term:
        raw = io.StringIO()
        term.child.logfile_read = raw
        shown = term.expect(RULE)
        term.expect_prompt()
        term.submit("/exit")
        term.wait_exit()

    assert_nothing_foreign(raw.getvalue())
    assert f"> first {CLEAR_SCREEN[1]}" in shown and f"evil{CLIPBOARD[1]}" in shown
    assert f"after {CLEAR_SCREEN[1]} the tool" in shown
    for written_out in SHOWN:
        assert shown.count(written_out) >= 3, written_out  # message, reply, tool argument (and result)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


CORRUPTIONS = {
    # what is done to the transcript's line 3 (the first reply, which asks for a tool)
    "torn_in_the_middle": lambda line: line[: len(line) // 2],
    "not_utf8": lambda line: line.replace(b"Reading", b"Read\xff\xfeing"),
    "not_an_object": lambda line: b"[1, 2, 3]",
    "unknown_type": lambda line: line.replace(b'"type":"assistant"', b'"type":"telepathy"', 1),
    "no_content": lambda line: b'{"type":"assistant","n":2,"at":"x"}',
    "nan_number": lambda line: b'{"type":"assistant","n":NaN,"content":[]}',
    "nan_in_the_call": lambda line: line.replace(b'"file_path":"a.txt"', b'"file_path":NaN'),
    "deeply_nested": lambda line: b"[" * 100_000 + b"]" * 100_000,
}


# A read of a.txt and its answer: its line 3 (the tool result's call) is the one the cases damage.
_CALL = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"file_path": "a.txt"}}
READ_A_TXT = [
    ("user", text("read a.txt")),
    ("assistant", [*text("Reading."), _CALL]),
    ("tool_results", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "apple"}]),
    ("assistant", text("It says apple.")),
]


@case(
    "crashes", "a corrupt middle line (torn, not UTF-8, not JSON, unknown): file and line named, rest loaded"
)
@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_corrupt_middle_line_is_named_and_the_rest_goes_on(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, corruption: str
) -> None:
    path = transcript(
        project_dir,
        [
            *READ_A_TXT,
            ("user", text("and b.txt?")),
            ("assistant", text("There is no b.txt.")),
        ],
    )
    lines = _lines(path)
    lines[2] = CORRUPTIONS[corruption](lines[2])
    path.write_bytes(b"\n".join(lines))
    api_env.stream_replies.append(text_reply("Going on."))

    result = cli.run("-c", "-p", "go on")

    assert result.returncode == 0, result.stderr
    assert f"{path}: line 3: " in result.stderr
    request = api_env.requests[-1]
    assert request.validation_error is None  # the result whose call was lost is left out
    sent = json.dumps(request.messages)
    assert "read a.txt" in sent and "There is no b.txt." in sent and "go on" in sent
    assert "toolu_1" not in sent


# Line 3 again, still JSON but no longer what the API takes back in a conversation.
REFUSED_BY_THE_API = {
    "call_without_id": lambda line: line.replace(b'"id":"toolu_1",', b""),
    "id_not_text": lambda line: line.replace(b'"id":"toolu_1"', b'"id":["toolu_1"]'),
    "text_not_text": lambda line: line.replace(b'"text":"Reading."', b'"text":["Reading."]'),
    "text_missing": lambda line: line.replace(b'"text":"Reading."', b'"words":"Reading."'),
    "unknown_block": lambda line: line.replace(b'"type":"tool_use"', b'"type":"telepathy"'),
    "input_not_an_object": lambda line: line.replace(b'{"file_path":"a.txt"}', b'"a.txt"'),
    "name_not_text": lambda line: line.replace(b'"name":"read_file"', b'"name":7'),
}


@case("crashes", "a line that is JSON but not a message the API takes: named by line, skipped, rest loaded")
@pytest.mark.parametrize("damage", list(REFUSED_BY_THE_API))
def test_a_line_the_api_would_refuse_is_named_and_the_rest_goes_on(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, damage: str
) -> None:
    path = transcript(
        project_dir,
        [
            *READ_A_TXT,
        ],
        session_id="a" * 32,
    )
    lines = _lines(path)
    lines[2] = REFUSED_BY_THE_API[damage](lines[2])
    path.write_bytes(b"\n".join(lines))
    api_env.stream_replies.extend([text_reply("Going on."), text_reply("Still going.")])

    first = cli.run("-r", "aaaa", "-p", "go on")
    again = cli.run("-r", "aaaa", "-p", "and on")

    assert first.returncode == 0 and "Traceback" not in first.stderr, first.stderr
    assert f"{path}: line 3: an assistant record the API would refuse: " in first.stderr
    assert again.returncode == 0 and again.stdout == "Still going.\n", again.stderr
    assert [r.validation_error for r in api_env.requests] == [None, None]
    sent = json.dumps(api_env.requests[-1].messages)
    assert "read a.txt" in sent and "It says apple." in sent and "and on" in sent


@case(
    "crashes",
    "`/resume ID` of a line the API would refuse: one warning, and the resumed conversation goes on",
)
def test_the_repl_resumes_past_a_line_the_api_would_refuse(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    path = transcript(project_dir, [("user", text("the saved question"))], session_id="1" * 32)
    with path.open("ab") as file:
        file.write(b'{"type":"assistant","n":2,"content":[{"type":"tool_use"}]}\n')
    api_env.stream_replies.extend([text_reply("Here first."), text_reply("Back in the saved one.")])

    with cli.terminal(columns=400) as term:
        term.wait_until_ready()
        term.submit("a question here")
        term.expect("Here first.")
        term.expect_prompt()
        term.submit("/resume 1111")
        term.expect(RULE)
        warning = term.expect("skipped")
        term.expect_prompt()
        term.submit("next message")
        term.expect("Back in the saved one.")
        term.expect_prompt()
        term.submit("/exit")
        term.wait_exit()
        printed = term.child.before or ""

    assert "Traceback" not in warning + printed
    assert f"{path}: line 3: an assistant record the API would refuse: block 1, a tool_use block" in warning
    request = api_env.requests[-1]
    assert request.validation_error is None
    sent = json.dumps(request.messages)
    assert "the saved question" in sent and "next message" in sent and "a question here" not in sent


@case("crashes", "the REPL resumes a transcript with a corrupt middle line: one warning naming file and line")
def test_the_repl_names_a_corrupt_line_and_goes_on(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    path = transcript(
        project_dir, [("user", text("one")), ("assistant", text("two")), ("user", text("three"))]
    )
    lines = _lines(path)
    lines[1] = b'{"type":"user","n":1,"content":[{"type":"text","text":"one"}]'  # its closing brace lost
    path.write_bytes(b"\n".join(lines))
    api_env.stream_replies.append(text_reply("Four."))

    with cli.terminal("-c", columns=400) as term:
        term.expect(RULE)
        # Told by the thread that loads the session: above the prompt, or before it on a quick machine.
        warning = term.expect("skipped")
        term.expect_prompt()
        term.submit("and now?")
        term.expect("Four.")
        term.expect_prompt()

    assert f"{path}: line 2: not valid JSON" in warning
    assert api_env.requests[-1].validation_error is None


@case("crashes", "one bad byte in the header line: named (line 1); `-c` and the list still find the session")
def test_a_damaged_header_costs_only_what_it_held(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    path = transcript(project_dir, [("user", text("the only question")), ("assistant", text("An answer."))])
    path.write_bytes(b"X" + path.read_bytes()[1:])
    api_env.stream_replies.append(text_reply("Going on."))

    listed = cli.run("sessions", "list")
    resumed = cli.run("-c", "-p", "go on")

    assert listed.stdout.startswith(path.stem) and "the only question" in listed.stdout, listed.stdout
    assert resumed.returncode == 0, resumed.stderr
    assert f"{path}: line 1: not a readable session header: not valid JSON" in resumed.stderr
    assert "the id is the file's name" in resumed.stderr
    assert api_env.requests[-1].validation_error is None
    assert "the only question" in json.dumps(api_env.requests[-1].messages)


@case("paths", "a transcript replaced by a FIFO or a symlink: `-r ID` says it cannot be resumed, never hangs")
@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_transcript_that_is_not_a_regular_file(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, tmp_path: Path, kind: str
) -> None:
    path = transcript(project_dir, [("user", text("a question"))], session_id="e" * 32)
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        secret = tmp_path / "secret.jsonl"
        secret.write_text('{"type":"session","format":1,"id":"x","started":"","cwd":"","model":"m"}\n')
        path.symlink_to(secret)

    result = cli.run("-r", "eeee", "-p", "x", timeout=20)

    assert result.returncode == 1
    assert "Session eeeeeeeeeeee cannot be resumed: " in result.stderr
    assert ("a symlink" if kind == "symlink" else "not a regular file") in result.stderr
    assert api_env.requests == []


@case("terminal", "an id typed with escape codes (`-r $'\\e]52;…'`): refused in one line, written out")
def test_an_id_with_escape_codes_is_refused_written_out(cli: Cli, api_env: FakeAnthropic) -> None:
    result = cli.run("-r", f"ab{CLIPBOARD[0]}{CLEAR_SCREEN[0]}", "-p", "x")

    assert result.returncode == 1
    assert_nothing_foreign(result.stderr)
    assert "is not a session id" in result.stderr and "\\x1b]52" in result.stderr


DEEP = b"[" * 100_000 + b"]" * 100_000


@case("crashes", "a header or first message nested 100,000 deep: loaded without that line, which is named")
@pytest.mark.parametrize("where", ["header", "first_message", "last_line"])
def test_a_line_nested_deep_enough_to_exhaust_the_stack(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, where: str
) -> None:
    path = transcript(project_dir, [("user", text("a question")), ("assistant", text("an answer"))], "f" * 32)
    lines = _lines(path)
    if where == "header":
        lines[0] = b'{"type":"session","format":1,"deep":' + DEEP + b"}"
    elif where == "first_message":
        lines[1] = b'{"type":"user","n":1,"content":' + DEEP + b"}"
    else:
        lines[-1] = b'{"type":"user","n":3,"content":' + DEEP + b"}"  # with no newline after it
    path.write_bytes(b"\n".join(lines))
    api_env.stream_replies.append(text_reply("Going on."))

    listed = cli.run("sessions", "list")
    resumed = cli.run("-r", "ffff", "-p", "go on")

    assert listed.returncode == 0 and listed.stdout.startswith("f" * 32), listed.stderr
    assert "cannot be resumed" not in listed.stdout
    assert resumed.returncode == 0, resumed.stderr
    assert api_env.requests[-1].validation_error is None
    if where == "header":  # the session's id is its file's name; the rest of it loads
        assert f"{path}: line 1: not a readable session header" in resumed.stderr
        assert "an answer" in json.dumps(api_env.requests[-1].messages)
