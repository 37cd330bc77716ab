"""`mini-claude sessions list` through the real program: scriptable lines, nothing raw from a
transcript on the terminal, one line and exit 1 on errors."""

from __future__ import annotations

import datetime as dt
import os
import re
import time
from pathlib import Path

import pytest

from mini_claude.core import config
from mini_claude.sessions.transcript.writer import TranscriptWriter
from tests.cli_harness import Cli

LINE = re.compile(r"(?P<id>[0-9a-f]{32})  (?P<used>\S+)  (?P<count>[ \d-]{5})  (?P<first>.*)")


@pytest.fixture
def cli(project_dir: Path) -> Cli:
    return Cli(project_dir)  # no API key: listing needs none


@pytest.fixture
def sessions_dir(project_dir: Path) -> Path:
    return config.project_sessions_dir(project_dir)


def saved(sessions_dir: Path, first: str, replies: int = 1, age_hours: float = 0) -> TranscriptWriter:
    writer = TranscriptWriter(sessions_dir, cwd="/w", project="/w", model="m")
    writer.add("user", [{"type": "text", "text": first}])
    for number in range(replies):
        if number:
            writer.add("user", [{"type": "text", "text": "and?"}])
        writer.add("assistant", [{"type": "text", "text": "sure"}])
    writer.close()
    when = time.time() - age_hours * 3600
    os.utime(writer.path, (when, when))
    return writer


def test_no_sessions_says_where_it_looked(cli: Cli, project_dir: Path, sessions_dir: Path) -> None:
    result = cli.run("sessions", "list")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"No saved sessions for {project_dir.resolve()} (looked in {sessions_dir}).\n"
    assert not sessions_dir.exists()


def test_each_session_is_one_line_of_stable_columns_newest_first(cli: Cli, sessions_dir: Path) -> None:
    old = saved(sessions_dir, "refactor the parser", replies=3, age_hours=30)
    new = saved(sessions_dir, "why does\nCI fail?", replies=1, age_hours=1)

    result = cli.run("sessions", "list")

    assert result.returncode == 0, result.stderr
    rows = [LINE.fullmatch(line) for line in result.stdout.splitlines()]
    assert all(rows), result.stdout
    assert [row["id"] for row in rows] == [new.session_id, old.session_id]
    assert [row["count"].strip() for row in rows] == ["2", "6"]
    assert [row["first"] for row in rows] == ["why does CI fail?", "refactor the parser"]
    used = dt.datetime.fromisoformat(rows[1]["used"])
    assert used.tzinfo is not None
    assert abs(used.timestamp() - (time.time() - 30 * 3600)) < 5


def test_a_hostile_first_message_cannot_act_on_the_terminal(cli: Cli, sessions_dir: Path) -> None:
    hostile = "\x1b]0;pwned\x07\x1b[2J\rfake line\u202eevil\x9b31m \udcff end"
    saved(sessions_dir, hostile)

    result = cli.run("sessions", "list")

    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    assert line.isprintable()  # no escape, carriage return, C1 or bidi control reached the output
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in line and "\\u202eevil" in line and "\\x9b31m" in line


def test_a_long_first_message_is_cut_to_fit_one_line(cli: Cli, sessions_dir: Path) -> None:
    saved(sessions_dir, "word " * 200)
    (line,) = cli.run("sessions", "list").stdout.splitlines()
    first = LINE.fullmatch(line)["first"]
    assert len(first) == 80 and first.endswith("…")


def test_a_broken_transcript_is_listed_with_why_it_cannot_be_resumed(cli: Cli, sessions_dir: Path) -> None:
    saved(sessions_dir, "fine")
    (sessions_dir / ("f" * 32 + ".jsonl")).write_text("garbage\n")
    lines = cli.run("sessions", "list").stdout.splitlines()
    broken = next(line for line in lines if line.startswith("f" * 32))
    assert LINE.fullmatch(broken)["count"].strip() == "-"
    assert broken.endswith(
        "(cannot be resumed: "
        + "f" * 32
        + ".jsonl: no line of it is a session header or a record: not a transcript)"
    )


def test_an_unusable_sessions_folder_is_one_line_and_exit_1(
    cli: Cli, sessions_dir: Path, tmp_path: Path
) -> None:
    sessions_dir.parent.mkdir(parents=True)
    sessions_dir.write_text("a file where the folder goes\n")
    result = cli.run("sessions", "list")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"mini-claude: {sessions_dir} is not a folder\n"


def test_sessions_without_an_action_lists(cli: Cli) -> None:
    alone, listed = cli.run("sessions"), cli.run("sessions", "list")
    assert alone.returncode == 0 and alone.stdout == listed.stdout
    assert alone.stdout.startswith("No saved sessions for ")


def test_an_unknown_sessions_action_is_one_usage_error(cli: Cli) -> None:
    result = cli.run("sessions", "lst")
    assert result.returncode == 2 and result.stderr.count("usage:") == 1 and "'list'" in result.stderr


def test_help_shows_the_sessions_command(cli: Cli) -> None:
    usage = cli.run("--help").stdout.split("\n\n")[0]
    assert "mini-claude sessions [list]" in usage
