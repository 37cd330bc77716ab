"""Finding saved sessions: the list newest first, an id or its start, the most recent one; and
retention, which removes old transcripts and nothing else."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mini_claude.core import config, prompts
from mini_claude.core.untrusted import wrap
from mini_claude.sessions.catalog import list_sessions, most_recent_session
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.sessions.lookup import SessionNotFound, find_session
from mini_claude.sessions.retention import remove_expired_sessions
from mini_claude.sessions.transcript.writer import TranscriptWriter

DAY = 86_400


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


@pytest.fixture
def sessions_dir(project_dir: Path) -> Path:
    return config.project_sessions_dir(project_dir)


def saved(
    sessions_dir: Path, first: str, *, turns: int = 1, age_days: float = 0, session_id: str | None = None
) -> TranscriptWriter:
    """A transcript of `turns` exchanges (user, memories, assistant, tool result, assistant)."""
    writer = TranscriptWriter(sessions_dir, cwd="/work", project="/work", model="m", session_id=session_id)
    for turn in range(turns):
        writer.add("user", [text(first if turn == 0 else f"more {turn}")])
        writer.add_memories([text("reminder")], [f"m{turn}.md"])
        writer.add("assistant", [{"type": "tool_use", "id": f"t{turn}", "name": "x", "input": {}}])
        writer.add("tool_results", [{"type": "tool_result", "tool_use_id": f"t{turn}", "content": "ok"}])
        writer.add("assistant", [text("done")])
    writer.close()
    if age_days:
        when = time.time() - age_days * DAY
        os.utime(writer.path, (when, when))
    return writer


# --- listing ------------------------------------------------------------------------------------------


def test_no_folder_means_no_sessions(sessions_dir: Path) -> None:
    assert list_sessions(sessions_dir) == [] and most_recent_session(sessions_dir) is None
    assert not sessions_dir.exists()  # looking does not create it


def test_sessions_are_listed_newest_first_with_counts_and_first_messages(sessions_dir: Path) -> None:
    old = saved(sessions_dir, "the old one", turns=3, age_days=2)
    new = saved(sessions_dir, "the new one\nwith a second line", turns=1, age_days=0.5)

    listed = list_sessions(sessions_dir)

    assert [s.id for s in listed] == [new.session_id, old.session_id]
    assert [s.first_message for s in listed] == ["the new one\nwith a second line", "the old one"]
    assert [s.message_count for s in listed] == [4, 12]
    assert [s.message_count for s in listed] == [
        len(load_transcript(s.path).messages) for s in listed
    ]  # the count read from the last line is the count a load finds
    assert listed[0].last_used == pytest.approx(time.time() - 0.5 * DAY, abs=5)
    assert listed[0].started.endswith("Z") and listed[0].project == "/work" and listed[0].problem is None


def test_a_first_message_too_long_for_the_head_still_gets_a_preview(sessions_dir: Path) -> None:
    long_message = 'start "quoted" \\ 中文 ' + "y" * 100_000
    saved(sessions_dir, long_message)
    (summary,) = list_sessions(sessions_dir)
    assert summary.first_message.startswith('start "quoted" \\ 中文 yyy')
    assert long_message.startswith(summary.first_message)


def context_block(key: str, **values: str) -> dict[str, str]:
    """What the REPL puts before the text typed: a `!command`'s output, an attached file."""
    return text(prompts.fill(prompts.load_toml("prompt_input.toml")[key].strip(), **values))


def shell_block(command: str, output: str) -> dict[str, str]:
    return context_block("shell_output", output=wrap("shell-output", f"$ {command}\n{output}"))


def file_block(path: str, content: str) -> dict[str, str]:
    return context_block("attached_file", path=path, content=wrap("attached-file", content, path=path))


@pytest.mark.parametrize("size", [100, 40_000, 3_000_000], ids=["in_the_head", "past_the_head", "megabytes"])
def test_the_first_message_is_what_the_user_typed_not_what_went_with_it(
    sessions_dir: Path, size: int
) -> None:
    output = "o" * size
    writer = TranscriptWriter(sessions_dir, cwd="/work", project="/work", model="m")
    writer.add(
        "user", [shell_block("make test", output), file_block("a.py", output), text("why does it fail?")]
    )
    writer.add("assistant", [text("done")])
    writer.close()
    attached = TranscriptWriter(sessions_dir, cwd="/work", project="/work", model="m")
    attached.add("user", [file_block("notes.txt", output), text("summarise @notes.txt for me")])
    attached.close()

    listed = {s.id: s.first_message for s in list_sessions(sessions_dir)}

    assert listed[writer.session_id] == "!make test · why does it fail?"
    assert listed[attached.session_id] == "summarise @notes.txt for me"


def test_words_shaped_like_an_attachment_but_typed_are_shown(sessions_dir: Path) -> None:
    saved(sessions_dir, "The user attached a file to their message yesterday")
    assert (
        list_sessions(sessions_dir)[0].first_message == "The user attached a file to their message yesterday"
    )


def test_a_transcript_ending_in_a_large_output_is_counted_from_its_last_line(sessions_dir: Path) -> None:
    writer = TranscriptWriter(sessions_dir, cwd="/", project="/", model="m")
    writer.add("user", [text("go")])
    writer.add("assistant", [{"type": "tool_use", "id": "t", "name": "x", "input": {}}])
    writer.add("tool_results", [{"type": "tool_result", "tool_use_id": "t", "content": "z" * 3_000_000}])
    (summary,) = list_sessions(sessions_dir)
    assert summary.message_count == 3


def test_a_hand_edited_transcript_is_still_counted(sessions_dir: Path) -> None:
    writer = saved(sessions_dir, "edited", turns=2)
    lines = writer.path.read_bytes().split(b"\n")
    lines[-2] = b'{"n": 99, "type": "assistant", "content": [{"type": "text", "text": "edited"}]}'
    writer.path.write_bytes(b"\n".join(lines))
    (summary,) = list_sessions(sessions_dir)
    assert summary.message_count == 8


def test_broken_transcripts_are_listed_with_the_reason_and_empty_ones_skipped(sessions_dir: Path) -> None:
    good = saved(sessions_dir, "fine")
    (sessions_dir / ("a" * 32 + ".jsonl")).write_bytes(b"not a header\n")
    (sessions_dir / ("b" * 32 + ".jsonl")).write_bytes(b"")  # stopped before its first record
    (sessions_dir / "notes.jsonl").write_text("not a session id\n")
    (sessions_dir / ("c" * 32 + ".json")).write_text("another suffix\n")

    listed = {s.id: s for s in list_sessions(sessions_dir)}

    assert set(listed) == {good.session_id, "a" * 32}
    problem = listed["a" * 32].problem or ""
    assert problem.endswith(
        f"{'a' * 32}.jsonl: no line of it is a session header or a record: not a transcript"
    )
    assert most_recent_session(sessions_dir).id == good.session_id  # never the broken one


def test_the_most_recent_session_skips_the_one_in_use(sessions_dir: Path) -> None:
    older = saved(sessions_dir, "older", age_days=1)
    current = saved(sessions_dir, "current")
    assert most_recent_session(sessions_dir).id == current.session_id
    assert most_recent_session(sessions_dir, exclude=current.session_id).id == older.session_id


# --- finding one ----------------------------------------------------------------------------------


def test_a_session_is_found_by_its_id_or_any_unique_start_of_it(sessions_dir: Path) -> None:
    one = saved(sessions_dir, "one", session_id="3fa9" + "0" * 28)
    saved(sessions_dir, "two", session_id="3fb1" + "0" * 28)
    for typed in (one.session_id, "3fa", "3FA9", f" {one.session_id}.jsonl "):
        assert find_session(sessions_dir, typed).id == one.session_id


def test_an_ambiguous_start_lists_the_matches_with_their_first_messages(sessions_dir: Path) -> None:
    saved(sessions_dir, "fix the \x1b[31mlogin\x1b[0m bug", session_id="3fa9" + "0" * 28)
    saved(sessions_dir, "write docs", session_id="3fb1" + "0" * 28, age_days=1)
    with pytest.raises(SessionNotFound) as raised:
        find_session(sessions_dir, "3f")
    message = str(raised.value)
    assert message.startswith("'3f' matches 2 sessions: 3fa900000000 (fix the \\x1b[31mlogin\\x1b[0m bug)")
    assert "3fb100000000 (write docs)" in message and message.endswith("Type more of the id.")
    assert "\x1b" not in message


def test_an_unknown_id_names_the_closest_ones(sessions_dir: Path) -> None:
    saved(sessions_dir, "one", session_id="3fa9c0" + "0" * 26)
    saved(sessions_dir, "two", session_id="77" + "1" * 30)
    with pytest.raises(SessionNotFound) as raised:
        find_session(sessions_dir, "3fa8c0")  # one character wrong
    message = str(raised.value)
    assert message.startswith("No session 3fa8c0 in this project; the closest: 3fa9c0000000, 771111111111")
    assert message.endswith("(see mini-claude sessions list).")


def test_an_unknown_id_in_a_project_without_sessions_says_so(sessions_dir: Path) -> None:
    with pytest.raises(SessionNotFound, match="this project has no saved sessions"):
        find_session(sessions_dir, "abc")


@pytest.mark.parametrize("typed", ["", "   ", "../../etc/passwd", "zz", "a" * 33, "3fa9 3fb1"])
def test_what_cannot_be_an_id_is_refused_before_any_lookup(sessions_dir: Path, typed: str) -> None:
    with pytest.raises(SessionNotFound, match="session id"):
        find_session(sessions_dir, typed, list_command="/resume")


def test_a_session_of_another_project_says_which_project(sessions_dir: Path, tmp_path: Path) -> None:
    other_root = tmp_path / "other-project"
    other_root.mkdir()
    other = TranscriptWriter(
        config.project_sessions_dir(other_root), cwd=other_root, project=other_root, model="m",
        session_id="e1" * 16,
    )  # fmt: skip
    other.add("user", [text("elsewhere")])
    saved(sessions_dir, "here")
    with pytest.raises(SessionNotFound) as raised:
        find_session(sessions_dir, "e1e1")
    assert str(raised.value) == (
        f"Session e1e1 belongs to another project: {other_root} (start mini-claude there to resume it)."
    )


# --- retention ----------------------------------------------------------------------------------------


def test_retention_removes_old_transcripts_not_young_ones_nor_the_current_one(
    sessions_dir: Path,
) -> None:
    old = saved(sessions_dir, "old", age_days=31)
    current = saved(sessions_dir, "current but idle", age_days=40)
    young = saved(sessions_dir, "young", age_days=29)

    report = remove_expired_sessions(sessions_dir, retention_days=30, keep=current.session_id)

    assert report.removed == [old.session_id] and report.problems == []
    assert not old.path.exists() and current.path.exists() and young.path.exists()


def test_retention_zero_keeps_everything(sessions_dir: Path) -> None:
    ancient = saved(sessions_dir, "ancient", age_days=3650)
    assert remove_expired_sessions(sessions_dir, retention_days=0, keep=None).removed == []
    assert ancient.path.exists()


def test_retention_never_removes_what_is_not_a_transcript(sessions_dir: Path) -> None:
    saved(sessions_dir, "make the folder")
    strangers = {
        "notes.jsonl": b'{"type":"session"}\n',
        "d" * 32 + ".txt": b'{"type":"session"}\n',
        "e" * 32 + ".jsonl": b"my own data, not a transcript\n",
    }
    when = time.time() - 100 * DAY
    for name, content in strangers.items():
        (sessions_dir / name).write_bytes(content)
        os.utime(sessions_dir / name, (when, when))
    remove_expired_sessions(sessions_dir, retention_days=30, keep=None)
    assert all((sessions_dir / name).read_bytes() == content for name, content in strangers.items())


def test_retention_leaves_a_session_another_mini_claude_is_writing(sessions_dir: Path) -> None:
    writer = TranscriptWriter(sessions_dir, cwd="/", project="/", model="m")
    writer.add("user", [text("still typing, 40 days later")])
    when = time.time() - 40 * DAY
    os.utime(writer.path, (when, when))
    assert remove_expired_sessions(sessions_dir, retention_days=30, keep=None).removed == []
    writer.close()
    assert remove_expired_sessions(sessions_dir, retention_days=30, keep=None).removed == [writer.session_id]
