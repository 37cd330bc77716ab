"""Saved transcripts: what the writer puts on disk, what the loader makes of it, and the repair
that makes a crashed conversation one the API accepts again."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from mini_claude.core import config, prompts
from mini_claude.core.env_values import ConfigError
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.sessions.loading.repair import repair_conversation
from mini_claude.sessions.transcript.records import MAX_TRANSCRIPT_BYTES, SESSION_ID_PATTERN
from mini_claude.sessions.transcript.reopen import SessionInUse, is_in_use
from mini_claude.sessions.transcript.sessions_folder import TranscriptError
from mini_claude.sessions.transcript.writer import TranscriptWriter
from tests.fake_api_validation import validate_request

ODD = "naïve 中文 😀 \u2028 line\u2029sep \x85 \x1b[2J \u202e \udcff\udc80 \x00 end"
# ODD as a conversation loads it: what UTF-8 cannot carry (and no request could send) is U+FFFD.
ODD_LOADED = ODD.replace("\udcff\udc80", "\ufffd\ufffd")


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(tool_id: str, name: str = "read_file", **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input or {"file_path": "a.py"}}


def tool_result(tool_id: str, content: str = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, **extra}


def request_error(messages: list[dict[str, Any]]) -> str | None:
    """What the fake API (which checks what the real one checks) says about a request holding these."""
    return validate_request({"model": "claude-test", "max_tokens": 100, "messages": messages})


@pytest.fixture
def sessions_dir(project_dir: Path) -> Path:
    return config.project_sessions_dir(project_dir)


def new_writer(sessions_dir: Path, warnings: list[str] | None = None, **kw: Any) -> TranscriptWriter:
    if warnings is not None:
        kw["warn"] = warnings.append
    return TranscriptWriter(sessions_dir, cwd="/work/app", project="/work/app", model="claude-test", **kw)


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


# --- where ------------------------------------------------------------------------------------------


def test_transcripts_live_beside_the_memories_of_the_same_project(project_dir: Path) -> None:
    state = config.project_state_dir(project_dir)
    assert config.project_memory_dir(project_dir) == state / "memory"
    assert config.project_sessions_dir(project_dir) == state / "sessions"
    assert state.parent == Path.home() / ".mini-claude" / "projects"
    settings = config.load_settings()
    assert settings.sessions_dir == state / "sessions" and settings.memory_dir == state / "memory"
    assert settings.session_retention_days == config.DEFAULT_SESSION_RETENTION_DAYS


@pytest.mark.parametrize("raw", ["-1", "soon", "nan", "1.5", "inf"])
def test_a_retention_setting_that_is_not_a_whole_number_of_days_is_refused(
    raw: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINI_CLAUDE_SESSION_RETENTION_DAYS", raw)
    with pytest.raises(ConfigError, match="MINI_CLAUDE_SESSION_RETENTION_DAYS"):
        config.load_settings()


def test_retention_zero_means_keep_for_ever(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINI_CLAUDE_SESSION_RETENTION_DAYS", "0")
    assert config.load_settings().session_retention_days == 0


# --- writing and reading back -------------------------------------------------------------------


def test_every_record_kind_reads_back_exactly(sessions_dir: Path) -> None:
    huge = ("x" * 1000 + "\n" + ODD + "\n") * 3000  # ~3 MB of tool output
    huge_loaded = huge.replace(ODD, ODD_LOADED)
    reminder = text("<system-reminder>a memory</system-reminder>")
    call = tool_use("t1", path=ODD, depth=3, flags=[True, None, 1.5])
    writer = new_writer(sessions_dir)
    writer.add("user", [text("fix the bug " + ODD)])
    writer.add_memories([reminder], ["user_role.md", "bad\udcffname.md"])
    writer.add("assistant", [text("Reading."), call])
    writer.add("tool_results", [tool_result("t1", huge, is_error=True)])
    writer.add_memories([text("another")], ["user_role.md", "project_x.md"])
    writer.add("assistant", [text("Done " + ODD)])
    writer.add("user", [text("thanks")])
    writer.add("notice", [text(prompts.notice("user_interrupted"))])
    writer.note_settings(model="claude-other", cwd="/work/app/sub")
    writer.add_compaction([text("summary of it all")], replaced=2, focus="the bug")
    writer.close()

    loaded = load_transcript(writer.path)

    assert loaded.messages == [
        {"role": "user", "content": [text("fix the bug " + ODD_LOADED), reminder]},
        {
            "role": "assistant",
            "content": [text("Reading."), tool_use("t1", path=ODD_LOADED, depth=3, flags=[True, None, 1.5])],
        },
        {"role": "user", "content": [tool_result("t1", huge_loaded, is_error=True), text("another")]},
        {"role": "assistant", "content": [text("Done " + ODD_LOADED)]},
        {"role": "user", "content": [text("thanks"), text(prompts.notice("user_interrupted"))]},
    ]
    assert loaded.recalled_files == ["user_role.md", "bad\udcffname.md", "project_x.md"]
    assert loaded.problems == [] and loaded.repairs == []
    assert (loaded.model, loaded.cwd) == ("claude-other", "/work/app/sub")
    compaction = loaded.last_compaction
    assert compaction is not None and compaction.summary == [text("summary of it all")]
    assert (compaction.replaced, compaction.focus) == (2, "the bug")
    header = loaded.header
    assert (header.id, header.cwd, header.project) == (writer.session_id, "/work/app", "/work/app")
    assert header.model == "claude-test"
    assert request_error(loaded.messages) is None


def test_each_record_is_one_line_of_valid_json_readable_as_utf8(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    writer.add("user", [text("plain " + "中文 \u2028 \x85 \x1b")])
    writer.add("assistant", [text("with a lone surrogate \udcff")])
    raw = writer.path.read_bytes()

    lines = raw.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 4  # header, two records, the final newline
    assert "中文".encode() in lines[1]  # readable text, greppable
    assert b"\\udcff" in lines[2]  # the one record with a lone surrogate is written with escapes
    for line in lines[:-1]:
        json.loads(line.decode("utf-8"))  # strict UTF-8, strict JSON
    assert [record["type"] for record in lines_of(writer.path)] == ["session", "user", "assistant"]


def test_non_finite_numbers_from_a_hostile_server_are_saved_as_text(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    writer.add("user", [text("go")])
    writer.add("assistant", [tool_use("t1", x=float("nan"), y=float("inf"))])
    assert b"NaN" not in writer.path.read_bytes() and b"Infinity" not in writer.path.read_bytes()
    assert load_transcript(writer.path).messages[1]["content"][0]["input"] == {"x": "nan", "y": "inf"}


def test_the_header_and_each_record_say_what_they_are(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    writer.add("user", [text("hi")])
    writer.add("assistant", [text("hello")])
    header, first, second = lines_of(writer.path)
    assert header["type"] == "session" and header["format"] == 1 and header["version"]
    assert header["id"] == writer.session_id == writer.path.stem
    assert (
        header["started"].endswith("Z") and header["cwd"] == "/work/app" and header["model"] == "claude-test"
    )
    assert (first["type"], first["n"], second["type"], second["n"]) == ("user", 1, "assistant", 2)
    assert first["at"] and second["at"]


def test_nothing_is_written_until_something_is_said(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    writer.note_settings(model="claude-other")
    assert not writer.path.exists()
    writer.add("user", [text("hi")])
    assert lines_of(writer.path)[0]["model"] == "claude-other"  # a change before the first record


def test_session_ids_are_random_hex_and_two_writers_never_share_a_file(sessions_dir: Path) -> None:
    first, second = new_writer(sessions_dir), new_writer(sessions_dir)
    assert SESSION_ID_PATTERN.fullmatch(first.session_id) and first.session_id != second.session_id
    same = [new_writer(sessions_dir, session_id="a" * 32) for _ in range(2)]
    for number, writer in enumerate(same):
        writer.add("user", [text(f"writer {number}")])
    assert same[0].path != same[1].path  # the id was taken: the second writer chose another
    assert load_transcript(same[0].path).messages[0]["content"] == [text("writer 0")]
    assert load_transcript(same[1].path).messages[0]["content"] == [text("writer 1")]


def test_folder_0700_and_file_0600_whatever_the_umask(sessions_dir: Path) -> None:
    old = os.umask(0)
    try:
        writer = new_writer(sessions_dir)
        writer.add("user", [text("private")])
    finally:
        os.umask(old)
    assert stat.S_IMODE(sessions_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(writer.path.stat().st_mode) == 0o600


def test_a_folder_open_to_others_is_made_private_before_anything_is_written(sessions_dir: Path) -> None:
    sessions_dir.mkdir(parents=True, mode=0o755)
    sessions_dir.chmod(0o777)
    writer = new_writer(sessions_dir)
    writer.add("user", [text("private")])
    assert stat.S_IMODE(sessions_dir.stat().st_mode) == 0o700


# --- the loader's view of damage ------------------------------------------------------------------


def saved_conversation(sessions_dir: Path) -> TranscriptWriter:
    writer = new_writer(sessions_dir)
    writer.add("user", [text("one")])
    writer.add("assistant", [text("two")])
    writer.add("user", [text("three")])
    writer.add("assistant", [text("four")])
    writer.close()
    return writer


def test_a_torn_last_line_is_ignored_silently(sessions_dir: Path) -> None:
    writer = saved_conversation(sessions_dir)
    with open(writer.path, "ab") as file:
        file.write(b'{"type":"user","n":5,"at":"2026-01-01T00:00:00Z","content":[{"type":"text","te')
    loaded = load_transcript(writer.path)
    assert [m["content"][0]["text"] for m in loaded.messages] == ["one", "two", "three", "four"]
    assert loaded.problems == []


def test_a_whole_last_line_without_its_newline_still_counts(sessions_dir: Path) -> None:
    writer = saved_conversation(sessions_dir)
    writer.path.write_bytes(writer.path.read_bytes().rstrip(b"\n"))
    assert load_transcript(writer.path).messages[-1]["content"] == [text("four")]


def test_a_corrupt_middle_line_is_reported_with_file_and_line_and_the_rest_loads(sessions_dir: Path) -> None:
    writer = saved_conversation(sessions_dir)
    lines = writer.path.read_bytes().split(b"\n")
    lines[2] = lines[2][:30] + b"#garbage#" + lines[2][30:]  # the "two" record
    lines.insert(4, b"\xc3( not utf-8")
    lines.insert(5, b'{"type":"hologram","n":3}')
    writer.path.write_bytes(b"\n".join(lines))

    loaded = load_transcript(writer.path)

    assert loaded.messages == [  # "one" and "three" merged: with "two" gone they are one user message
        {"role": "user", "content": [text("one"), text("three")]},
        {"role": "assistant", "content": [text("four")]},
    ]
    assert len(loaded.problems) == 3
    assert loaded.problems[0].startswith(f"{writer.path}: line 3: not valid JSON")
    assert loaded.problems[1] == f"{writer.path}: line 5: not valid UTF-8 text; skipped"
    assert "line 6: unknown record type 'hologram'" in loaded.problems[2]
    assert all("\n" not in problem for problem in loaded.problems)
    assert request_error(loaded.messages) is None


def test_many_corrupt_lines_are_summed_up_after_the_first_ten(sessions_dir: Path) -> None:
    writer = saved_conversation(sessions_dir)
    with open(writer.path, "ab") as file:
        file.write(
            b"junk\n" * 25 + b'{"type":"user","n":5,"at":"x","content":[{"type":"text","text":"five"}]}\n'
        )
    loaded = load_transcript(writer.path)
    assert len(loaded.problems) == 11 and loaded.problems[-1].endswith("15 more bad lines skipped")
    assert loaded.messages[-1]["content"] == [text("five")]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "is empty"),
        (b'{"type":"user","n":1,"content":[]}\n', "no line of it is a session header or a record"),
        (b"not json\nnor this\n", "no line of it is a session header or a record"),
        (
            b'{"type":"session","format":2,"id":"x","started":"s","cwd":"/","model":"m"}\n',
            "update mini-claude",
        ),
    ],
)
def test_a_file_with_nothing_to_load_or_of_a_newer_format_is_a_clear_error(
    sessions_dir: Path, content: bytes, reason: str
) -> None:
    sessions_dir.mkdir(parents=True)
    path = sessions_dir / ("b" * 32 + ".jsonl")
    path.write_bytes(content)
    with pytest.raises(TranscriptError, match=reason) as raised:
        load_transcript(path)
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_a_transcript_over_the_size_limit_is_refused_without_reading_it(sessions_dir: Path) -> None:
    writer = saved_conversation(sessions_dir)
    os.truncate(writer.path, MAX_TRANSCRIPT_BYTES + 1)  # sparse: no time spent writing it
    with pytest.raises(TranscriptError, match=r"is 200 MB, more than the 200 MB a transcript may have"):
        load_transcript(writer.path)


def test_the_writer_stops_at_the_size_limit_so_every_transcript_it_leaves_loads(
    sessions_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mini_claude.sessions.transcript.writer as transcript

    monkeypatch.setattr(transcript, "MAX_TRANSCRIPT_BYTES", 4096)
    warnings: list[str] = []
    writer = new_writer(sessions_dir, warnings)
    for number in range(20):
        writer.add("user" if number % 2 == 0 else "assistant", [text("x" * 500)])
    assert len(warnings) == 1 and "reached the" in warnings[0] and "/clear starts a new one" in warnings[0]
    assert writer.path.stat().st_size <= 4096
    assert load_transcript(writer.path).problems == []


# --- repair: the next request must be valid ---------------------------------------------------------


def test_a_tool_call_cut_off_by_a_crash_is_answered_as_interrupted(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    writer.add("user", [text("run both")])
    writer.add("assistant", [text("Running."), tool_use("t1"), tool_use("t2", "run_shell", command="make")])
    writer.add("tool_results", [tool_result("t1")])  # the crash came while t2 ran

    loaded = load_transcript(writer.path)

    answers = loaded.messages[-1]["content"]
    assert [block["tool_use_id"] for block in answers] == ["t1", "t2"]
    assert answers[0] == tool_result("t1")
    assert answers[1]["is_error"] is True and answers[1]["content"] == prompts.notice(
        "session_ended_mid_call"
    )
    assert loaded.repairs == [
        "1 tool call left without a result when the session ended: answered as interrupted"
    ]
    assert request_error(loaded.messages) is None
    assert request_error([*loaded.messages, {"role": "assistant", "content": [text("ok")]}]) is None


def test_a_final_assistant_message_with_calls_gets_a_message_of_answers(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    writer.add("user", [text("go")])
    writer.add("assistant", [tool_use("t1"), tool_use("t2")])
    messages = load_transcript(writer.path).messages
    assert request_error(messages[:2]) is not None  # as it was on disk: the API would refuse it
    assert [block["tool_use_id"] for block in messages[2]["content"]] == ["t1", "t2"]
    assert request_error(messages) is None


def test_the_next_message_of_a_resumed_crash_stays_valid(sessions_dir: Path) -> None:
    """The user's next message after resuming merges with the answers, as the agent merges it."""
    writer = new_writer(sessions_dir)
    writer.add("user", [text("go")])
    writer.add("assistant", [tool_use("t1")])
    writer.close()
    resumed = TranscriptWriter.continuing(writer.path, model="m", cwd="/work/app", project="/work/app")
    resumed.add("user", [text("what happened?")])
    messages = load_transcript(writer.path).messages
    assert [b["type"] for b in messages[-1]["content"]] == ["tool_result", "text"]
    assert request_error(messages) is None


def test_damage_in_the_middle_still_leaves_a_valid_request(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    writer.add("user", [text("start")])
    writer.add("assistant", [tool_use("t1")])
    writer.add("tool_results", [tool_result("t1")])
    writer.add("assistant", [tool_use("t2")])  # line 5: will be damaged, its result left orphaned
    writer.add("tool_results", [tool_result("t2")])
    writer.add("assistant", [text("done")])
    writer.add("user", [text("next")])
    lines = writer.path.read_bytes().split(b"\n")
    lines[4] = b"{broken"
    writer.path.write_bytes(b"\n".join(lines))

    loaded = load_transcript(writer.path)

    assert request_error(loaded.messages) is None
    assert "left out" in loaded.repairs[-1] and len(loaded.problems) == 1


def test_a_lost_first_line_is_replaced_by_a_note_so_the_conversation_starts_with_the_user(
    sessions_dir: Path,
) -> None:
    writer = saved_conversation(sessions_dir)
    writer_lines = writer.path.read_bytes().split(b"\n")
    writer_lines[1] = b"{lost"
    writer.path.write_bytes(b"\n".join(writer_lines))
    loaded = load_transcript(writer.path)
    assert loaded.messages[0] == {"role": "user", "content": [text(prompts.notice("transcript_gap"))]}
    assert request_error(loaded.messages) is None


def test_repair_leaves_a_valid_conversation_as_it_is() -> None:
    messages = [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [tool_use("t1"), tool_use("t2")]},
        {"role": "user", "content": [tool_result("t1"), tool_result("t2", is_error=True), text("and")]},
        {"role": "assistant", "content": [text("ok")]},
    ]
    before = json.dumps(messages)
    repaired = repair_conversation(messages)
    assert repaired.messages == messages and repaired.repairs == []
    assert repaired.index_map == list(range(len(messages) + 1)) and repaired.appended == []
    assert json.dumps(messages) == before  # the input is not changed


# --- resuming a file, and files in use ---------------------------------------------------------------


def test_continuing_a_transcript_appends_to_it_and_keeps_counting(sessions_dir: Path) -> None:
    first = saved_conversation(sessions_dir)
    resumed = TranscriptWriter.continuing(first.path, model="m", cwd="/work/app", project="/work/app")
    resumed.add("user", [text("five")])
    assert resumed.session_id == first.session_id and resumed.stopped is None
    assert lines_of(first.path)[-1]["n"] == 5
    assert [m["content"][0]["text"] for m in load_transcript(first.path).messages][-1] == "five"


def test_continuing_after_a_crash_drops_the_torn_line_instead_of_gluing_onto_it(sessions_dir: Path) -> None:
    first = saved_conversation(sessions_dir)
    with open(first.path, "ab") as file:
        file.write(b'{"type":"user","n":5,"at":"2026')
    resumed = TranscriptWriter.continuing(first.path, model="m", cwd="/work/app", project="/work/app")
    resumed.add("user", [text("five")])
    loaded = load_transcript(first.path)
    assert loaded.problems == [] and loaded.messages[-1]["content"] == [text("five")]


def test_continuing_keeps_a_large_whole_last_record_that_lost_its_newline(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    writer.add("user", [text("go")])
    writer.add("assistant", [text("z" * 3_000_000)])
    writer.close()
    writer.path.write_bytes(writer.path.read_bytes().rstrip(b"\n"))  # as an editor may save it
    resumed = TranscriptWriter.continuing(writer.path, model="m", cwd="/", project="/")
    resumed.add("user", [text("still there?")])
    loaded = load_transcript(writer.path)
    assert loaded.problems == [] and loaded.messages[1]["content"] == [text("z" * 3_000_000)]
    assert loaded.messages[2]["content"] == [text("still there?")]


def test_a_failing_warning_callback_does_not_reach_the_agent(sessions_dir: Path) -> None:
    sessions_dir.parent.mkdir(parents=True)
    sessions_dir.write_text("a file where the folder goes")

    def broken_ui(_text: str) -> None:
        raise RuntimeError("the UI is gone")

    writer = new_writer(sessions_dir, warn=broken_ui)
    writer.add("user", [text("hi")])
    assert writer.stopped == f"Session not saved: {sessions_dir} is not a folder (the conversation goes on)"


def test_a_transcript_in_use_cannot_be_continued_by_another_writer(sessions_dir: Path) -> None:
    writer = new_writer(sessions_dir)
    writer.add("user", [text("hi")])
    assert is_in_use(writer.path)
    with pytest.raises(SessionInUse, match="open in another mini-claude"):
        TranscriptWriter.continuing(writer.path, model="m", cwd="/", project="/")
    writer.close()
    assert not is_in_use(writer.path)


def test_after_close_nothing_more_is_written(sessions_dir: Path) -> None:
    writer = saved_conversation(sessions_dir)
    size = writer.path.stat().st_size
    writer.add("user", [text("late")])
    assert writer.path.stat().st_size == size


def test_a_wrong_record_kind_is_a_programming_error(sessions_dir: Path) -> None:
    with pytest.raises(ValueError, match="not a content record kind"):
        new_writer(sessions_dir).add("memories", [text("use add_memories")])
