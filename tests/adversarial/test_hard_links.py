"""A file mini-claude appends to or rewrites that is a hard link is treated like a symlink: never
written through. A transcript hard-linked to a file outside the sessions folder was appended to
(and its torn end truncated) through the link. The others: the input history (appended to by the
prompt), the debug log, memory files, MEMORY.md, project.json and the recall side files (rewritten
by rename, which breaks a link rather than following it), and a file's mode, never narrowed
through a link (it is the other name's mode too)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from mini_claude.core import config
from mini_claude.memory.recall.history import finish_pending_writes
from tests.adversarial.cases import case
from tests.agent_harness import Harness, hold_replies_until_recall_settles
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import choose, main_calls, memory_text

VICTIM_TEXT = b"# someone's shell settings\nexport PATH=$HOME/bin:$PATH\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside mini-claude's folders, 0644, that a hard link in them leads to."""
    path = tmp_path / "outside" / "bashrc"
    path.parent.mkdir()
    path.write_bytes(VICTIM_TEXT)
    path.chmod(0o644)
    return path


def assert_untouched(victim: Path, before: bytes = VICTIM_TEXT) -> None:
    assert victim.read_bytes() == before
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644


@case(
    "paths",
    "a transcript hard-linked to a file outside (its last line torn): `-r` refuses to append, says "
    "why in one line; the outside file neither appended to nor truncated",
)
@pytest.mark.parametrize("how", ["resume_by_id", "continue_latest"])
def test_a_hard_linked_transcript_is_never_appended_to(
    api_env: FakeAnthropic, project_dir: Path, tmp_path: Path, how: str
) -> None:
    cli = Cli(project_dir)
    api_env.stream_replies.append(text_reply("First answer."))
    assert cli.run("-p", "hello").returncode == 0
    [transcript] = config.project_sessions_dir().glob("*.jsonl")
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(transcript.read_bytes() + b'{"type": "user", "torn')  # a crash's torn line
    transcript.unlink()
    os.link(outside, transcript)
    before = outside.read_bytes()
    api_env.stream_replies.append(text_reply("Second answer."))

    args = ["-r", transcript.stem[:8]] if how == "resume_by_id" else ["-c"]
    result = cli.run(*args, "-p", "and now?")

    assert outside.read_bytes() == before
    assert "hard link" in result.stderr and "never written through one" in result.stderr, result.stderr
    assert result.stderr.count("hard link") == 1


@case(
    "terminal",
    "the input history hard-linked to ~/.bashrc: not loaded, one warning; typed lines go nowhere near it",
)
def test_a_hard_linked_input_history(cli: Cli, isolated_env: Path, victim: Path) -> None:
    history = isolated_env / ".local" / "share" / "mini-claude" / "history"
    history.parent.mkdir(parents=True)
    os.link(victim, history)

    with cli.terminal(columns=300) as term:
        term.expect("Input history not loaded")
        term.expect("hard link")
        term.expect_prompt()
        term.submit("!echo typed at the prompt")
        term.expect("typed at the prompt")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0

    assert_untouched(victim)


@case(
    "memory",
    "memory files, MEMORY.md, project.json and the recall side files hard-linked to a file outside: "
    "a save, an edit, a recall and a new session rewrite them by rename; the outside files untouched",
)
def test_memory_files_and_side_files_are_never_written_through(
    api_env: FakeAnthropic, project_dir: Path, tmp_path: Path
) -> None:
    memory_dir = config.project_memory_dir()
    memory_dir.mkdir(parents=True)
    (memory_dir / "project_deploys.md").write_text(
        memory_text("deploys", "how we deploy", body="Thursdays.\n")
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    names = {
        "memory": memory_dir / "project_deploys.md",
        "index": memory_dir / "MEMORY.md",
        "history": memory_dir / ".recall-history.json",
        "ranking": memory_dir / ".recall-index.sqlite3",
        "record": memory_dir.parent / "project.json",
    }
    (memory_dir / "MEMORY.md").write_text("# Memory index\n")
    (memory_dir / ".recall-history.json").write_text(json.dumps({"format": 1, "since": 1, "memories": {}}))
    (memory_dir / ".recall-index.sqlite3").write_bytes(b"SQLite format 3\x00" + bytes(200))
    (memory_dir.parent / "project.json").write_text(
        json.dumps({"version": 1, "root": str(config.memory_project_root(project_dir))}, indent=2) + "\n"
    )
    originals = {}
    for key, path in names.items():
        link = outside / key
        os.link(path, link)
        link.chmod(0o644)
        originals[key] = link.read_bytes()
    harness = Harness(answers=["y"]).start()  # a memory written by hand: its change asks first
    harness.session.warm_up()  # writes down whose project folder this is
    api_env.plain_replies.append(choose("project_deploys.md"))
    api_env.responder = hold_replies_until_recall_settles
    edited = memory_text("deploys", "how we deploy", body="Thursdays, after standup.\n")
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": str(names["memory"]), "content": edited}),
            text_reply("Noted."),
        ]
    )

    harness.turn("we deploy after standup")
    finish_pending_writes()

    assert "after standup" in names["memory"].read_text()  # the memory was edited, by its own name
    assert len(main_calls(api_env)) == 2
    for key in names:
        link = outside / key
        assert link.read_bytes() == originals[key], key
        assert stat.S_IMODE(link.stat().st_mode) == 0o644, key
        assert link.stat().st_nlink == 1, key  # the name in our folder is a file of its own now
