"""Print mode as scripts use it: `@path` in the prompt, `--fork-session` with `-c`/`-r`, and its
sessions marked as print mode's in the session list."""

from __future__ import annotations

import json
from pathlib import Path

from mini_claude.core.config import project_sessions_dir
from mini_claude.sessions.catalog import list_sessions
from mini_claude.sessions.loading.loader import load_transcript
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply


def user_texts(fake: FakeAnthropic) -> list[str]:
    last = [r for r in fake.requests if r.stream][-1]
    return [
        b["text"] for m in last.messages if m["role"] == "user" for b in m["content"] if b["type"] == "text"
    ]


def test_a_mention_in_the_prompt_attaches_the_file(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "notes.txt").write_text("UNIQUE-NOTE-LINE\n")
    api_env.stream_replies.append(text_reply("It is a note."))

    result = cli.run("-p", "summarize @notes.txt")

    assert result.returncode == 0, result.stderr
    attached, typed = user_texts(api_env)
    assert "UNIQUE-NOTE-LINE" in attached and typed == "summarize @notes.txt"
    assert "Attached @notes.txt (1 line)" in result.stderr


def test_a_mention_that_cannot_be_attached_sends_nothing(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.txt"  # reading it asks, and nobody can answer here
    outside.write_text("secret\n")

    result = cli.run("-p", f"what is in @{outside}")

    assert result.returncode == 2
    assert f"@{outside} not attached: permission denied (the prompt was not sent)" in result.stderr
    assert api_env.requests == []


def test_piped_input_is_data_not_mentions(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_dir / "notes.txt").write_text("UNIQUE-NOTE-LINE\n")
    api_env.stream_replies.append(text_reply("ok"))

    result = cli.run("-p", "what is this?", stdin="decorated with @notes.txt\n")

    assert result.returncode == 0, result.stderr
    assert "UNIQUE-NOTE-LINE" not in json.dumps(api_env.requests[-1].messages)


def test_fork_session_goes_on_in_a_new_session(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    api_env.stream_replies.extend([text_reply("First."), text_reply("Forked."), text_reply("Again.")])
    first = json.loads(cli.run("--output-format", "json", "-p", "start").stdout)
    original = project_sessions_dir(project_dir) / f"{first['session_id']}.jsonl"
    before = original.read_bytes()

    forked = json.loads(
        cli.run("--output-format", "json", "-r", first["session_id"], "--fork-session", "-p", "go on").stdout
    )
    again = cli.run("-c", "--fork-session", "-p", "once more")

    assert forked["session_id"] != first["session_id"] and forked["result"] == "Forked."
    assert original.read_bytes() == before  # the session forked from is left as it was
    copy = load_transcript(project_sessions_dir(project_dir) / f"{forked['session_id']}.jsonl")
    assert [m["content"][-1]["text"] for m in copy.messages] == ["start", "First.", "go on", "Forked."]
    assert again.returncode == 0 and "continues in a new session" in again.stderr
    usage = cli.run("--fork-session", "-p", "alone")
    assert usage.returncode == 2 and "--fork-session goes with -c or -r" in usage.stderr


def test_print_mode_sessions_are_marked(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    api_env.stream_replies.append(text_reply("ok"))
    assert cli.run("-p", "from a script").returncode == 0

    [summary] = list_sessions(project_sessions_dir(project_dir))
    listed = cli.run("sessions", "list")

    assert summary.print_mode is True
    assert "-p · from a script" in listed.stdout
