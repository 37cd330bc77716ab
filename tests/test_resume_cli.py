"""`-c` / `-r ID` in print mode, and every way of asking for a session that cannot be had: one line
on stderr, the exit code, and nothing on disk changed."""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path

import pytest

from mini_claude.core.config import memory_project_root, project_sessions_dir
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.sessions.transcript.writer import TranscriptWriter
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply

# Each saved transcript a second newer than the one before: two written within one tick of the
# file system's clock would otherwise tie, and the newest-first order fall back to the ids.
_SAVED_AT = itertools.count(int(time.time()) - 3600)


def saved(project: Path, session_id: str, *texts: str) -> Path:
    """A closed transcript whose messages are `texts`, alternately the user's and the model's."""
    root = memory_project_root(project)
    writer = TranscriptWriter(
        project_sessions_dir(project), cwd=project, project=root, model="m", session_id=session_id
    )
    for index, text in enumerate(texts):
        writer.add("user" if index % 2 == 0 else "assistant", [{"type": "text", "text": text}])
    writer.close()
    when = next(_SAVED_AT)
    os.utime(writer.path, (when, when))
    return writer.path


def sessions_on_disk(project: Path) -> dict[str, bytes]:
    folder = project_sessions_dir(project)
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.exists() else {}


def texts_sent(fake: FakeAnthropic) -> list[str]:
    last = [r for r in fake.requests if r.stream][-1]
    return [b["text"] for m in last.messages for b in m["content"] if b.get("type") == "text"]


def test_continue_in_print_mode_goes_on_with_the_last_conversation(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.extend([text_reply("The plan is ready."), text_reply("Step two is next.")])
    assert cli.run("-p", "make a plan").returncode == 0

    result = cli.run("-c", "-p", "and now?")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Step two is next.\n"
    assert texts_sent(api_env) == ["make a plan", "The plan is ready.", "and now?"]
    assert api_env.requests[-1].validation_error is None
    assert "resumed session" in result.stderr and "(2 messages)" in result.stderr
    [transcript] = project_sessions_dir(project_dir).iterdir()
    assert len(load_transcript(transcript).messages) == 4  # the same file goes on


def test_continue_with_the_prompt_piped_on_stdin(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    saved(project_dir, "a" * 32, "what is the plan?", "To ship on Friday.")
    api_env.stream_replies.append(text_reply("Still Friday."))

    result = cli.run("-c", stdin="is that still true?\n")

    assert result.returncode == 0, result.stderr
    assert texts_sent(api_env) == ["what is the plan?", "To ship on Friday.", "is that still true?\n"]


def test_resume_by_a_unique_prefix(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    saved(project_dir, "c0ffee" + "0" * 26, "the older question", "the older answer")
    saved(project_dir, "beef" + "0" * 28, "the newer question", "the newer answer")
    api_env.stream_replies.append(text_reply("Back to the older one."))

    result = cli.run("-r", "C0FF", "-p", "go on")

    assert result.returncode == 0, result.stderr
    assert texts_sent(api_env) == ["the older question", "the older answer", "go on"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["-c", "-p", "x"], 1, "No saved session to continue in "),
        (["-r", "abc", "-p", "x"], 1, "'abc' matches 2 sessions: abc2"),
        (["-r", "abd9", "-p", "x"], 1, "No session abd9 in this project; the closest: abc"),
        (["-r", "not-an-id", "-p", "x"], 1, "'not-an-id' is not a session id"),
        (["-r", "-p", "x"], 2, "-r without an id shows a list to choose from, which needs a terminal"),
        (["-c", "-r", "abc", "-p", "x"], 2, "not allowed with argument"),
        (["-c", "sessions", "list"], 2, "-c and -r continue a conversation; they do not go with `sessions`"),
    ],
    ids=["nothing_saved", "ambiguous", "unknown", "not_an_id", "list_without_terminal", "both", "subcommand"],
)
def test_a_session_that_cannot_be_had_is_one_line_and_changes_nothing(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, args: list[str], code: int, message: str
) -> None:
    if not message.startswith("No saved session"):
        saved(project_dir, "abc1" + "1" * 28, "one question", "one answer")
        saved(project_dir, "abc2" + "2" * 28, "another question", "another answer")
    before = sessions_on_disk(project_dir)

    result = cli.run(*args)

    assert result.returncode == code
    [line] = [line for line in result.stderr.splitlines() if line.startswith("mini-claude:")]
    assert message in line  # (a usage error also shows the usage lines above it, as argparse does)
    assert result.stdout == ""
    assert api_env.requests == []
    assert sessions_on_disk(project_dir) == before


def test_a_session_of_another_project_says_which_one(
    cli: Cli, api_env: FakeAnthropic, tmp_path: Path
) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    saved(other, "ab12" + "0" * 28, "a question there", "an answer there")

    result = cli.run("-r", "ab12", "-p", "x")

    assert result.returncode == 1
    assert f"Session ab12 belongs to another project: {other.resolve()}" in result.stderr
    assert api_env.requests == []


def test_a_corrupt_line_is_named_and_the_rest_goes_on(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    path = saved(project_dir, "d" * 32, "first question", "first answer", "second question", "second answer")
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2][:30]  # the first answer's record, cut short in the middle of the file
    path.write_bytes(b"\n".join(lines))
    api_env.stream_replies.append(text_reply("Going on."))

    result = cli.run("-c", "-p", "go on")

    assert result.returncode == 0, result.stderr
    assert f"{path}: line 3: not valid JSON" in result.stderr
    assert api_env.requests[-1].validation_error is None
    assert texts_sent(api_env) == ["first question", "second question", "second answer", "go on"]


def test_a_call_a_crash_left_open_is_answered_once_and_the_answer_saved(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    root = memory_project_root(project_dir)
    writer = TranscriptWriter(project_sessions_dir(project_dir), cwd=project_dir, project=root, model="m")
    writer.add("user", [{"type": "text", "text": "wait for the build"}])
    call = {"type": "tool_use", "id": "toolu_sleepy", "name": "run_shell", "input": {"command": "sleep 30"}}
    writer.add("assistant", [{"type": "text", "text": "Waiting."}, call])  # then kill -9
    writer.close()
    api_env.stream_replies.extend([text_reply("It was cut off."), text_reply("Still cut off.")])

    first = cli.run("-c", "-p", "what happened?")
    again = cli.run("-c", "-p", "and now?")

    assert "1 tool call left without a result when the session ended: answered as interrupted" in first.stderr
    assert again.returncode == 0 and "interrupted" not in again.stderr, again.stderr
    assert [r.validation_error for r in api_env.requests] == [None, None]
    loaded = load_transcript(writer.path)
    assert loaded.repairs == [] and loaded.problems == []
    [answer] = [b for b in loaded.messages[2]["content"] if b["type"] == "tool_result"]
    assert answer["tool_use_id"] == "toolu_sleepy" and answer["is_error"] is True
    assert [m["role"] for m in loaded.messages] == ["user", "assistant"] * 3


def test_a_session_of_a_project_folder_that_was_moved_goes_on_here(
    api_env: FakeAnthropic, tmp_path: Path
) -> None:
    old = tmp_path / "app"
    old.mkdir()
    original = saved(old, "ab12" + "0" * 28, "a question before the move", "an answer before it")
    before = original.read_bytes()
    new = tmp_path / "app-renamed"
    old.rename(new)
    cli = Cli(new)
    api_env.stream_replies.extend([text_reply("Going on here."), text_reply("And again.")])

    nothing_here = cli.run("-c", "-p", "x")
    moved = cli.run("-r", "ab12", "-p", "go on")
    again = cli.run("-c", "-p", "and now?")

    assert nothing_here.returncode == 1
    assert f"The newest session of {old}, a folder that no longer exists, is ab12" in nothing_here.stderr
    assert "`mini-claude -r ab120000` continues it here." in nothing_here.stderr
    assert moved.returncode == 0, moved.stderr
    assert (
        f"Session ab1200000000 was saved for {old}, which no longer exists: continuing it here as "
        in moved.stderr
    )
    assert again.returncode == 0 and again.stdout == "And again.\n", again.stderr
    assert texts_sent(api_env) == [
        "a question before the move",
        "an answer before it",
        "go on",
        "Going on here.",
        "and now?",
    ]
    [copy] = project_sessions_dir(new).iterdir()
    header = json.loads(copy.read_bytes().split(b"\n")[0])
    assert header["project"] == str(new) and header["copied_from"] == "ab12" + "0" * 28
    assert original.read_bytes() == before  # the original stays as it was, in the old folder's


def test_a_session_of_a_project_that_still_exists_is_resumed_there(
    cli: Cli, api_env: FakeAnthropic, tmp_path: Path
) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    saved(other, "cd34" + "0" * 28, "a question there", "an answer there")

    result = cli.run("-r", "cd34", "-p", "x")

    assert result.returncode == 1
    assert (
        f"belongs to another project: {other.resolve()} (start mini-claude there to resume it)"
        in result.stderr
    )
    assert api_env.requests == []
