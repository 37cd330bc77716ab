"""Checkpoints and `/rewind` on a real session: a file tool's change kept before it happens (once a
turn), the code restored to before any message, the conversation rewound into a new transcript
(the old one left to resume), shell commands and MCP tools marked, checkpoints surviving a resume."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from mini_claude.app.invocation import invoked, prepare, run_prepared
from mini_claude.app.resume import finish_resume, open_session
from mini_claude.app.rewind import rewind, rewind_points
from mini_claude.sessions.catalog import list_sessions
from mini_claude.sessions.checkpoints.file_checkpoints import MAX_KEPT_BYTES
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.ui.conversation.commands import rewind_summary
from mini_claude.ui.conversation.rewind_picker import point_row
from tests.agent_harness import Harness
from tests.extensions_kit import command_file, configured_harness
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.mcp_kit import server_command, write_user_servers


def edit(path: str, old: str, new: str) -> object:
    return tool_reply("edit_file", {"file_path": path, "old_string": old, "new_string": new})


def three_turns(harness: Harness, api_env: FakeAnthropic, project_dir: Path) -> None:
    """app.py edited twice in turn 0, new.py created in turn 1, a command run in turn 2."""
    (project_dir / "app.py").write_text("version = 1\n")
    api_env.stream_replies.extend(
        [
            edit("app.py", "1", "2"), edit("app.py", "2", "3"), text_reply("Bumped."),
            tool_reply("write_file", {"file_path": "new.py", "content": "new\n"}), text_reply("Made."),
            tool_reply("run_shell", {"command": "echo > x.txt"}),
            edit("app.py", "3", "4"), text_reply("Ran."),
        ]
    )  # fmt: skip
    harness.answers.extend(["a", "a", "a"])  # edit_file always, write_file always, run_shell always
    for text in ("bump the version", "add new.py", "run a command"):
        assert harness.turn(text).reason == "done"


def test_the_code_goes_back_to_before_a_message(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    three_turns(harness, api_env, project_dir)
    assert (project_dir / "app.py").read_text() == "version = 4\n"

    points = rewind_points(harness.session)

    assert [p.turn.text for p in points] == ["bump the version", "add new.py", "run a command"]
    assert [p.ran_since for p in points] == [("commands",)] * 3
    assert [p.files_changed_then for p in points] == [1, 1, 1]
    done = rewind(harness.session, points[0], code=True, conversation=False)

    assert (project_dir / "app.py").read_text() == "version = 1\n"  # before the first message
    assert not (project_dir / "new.py").exists()  # it did not exist then
    assert (project_dir / "x.txt").exists()  # a command's change is not undone
    assert done.restored is not None and sorted(map(os.path.basename, done.restored.written)) == ["app.py"]
    assert len(harness.session.agent.messages) == 16  # the conversation stays


def test_the_conversation_goes_back_into_a_new_session(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    three_turns(harness, api_env, project_dir)
    old_id = harness.session.transcript.session_id
    old_file = harness.session.transcript.writer.path

    done = rewind(harness.session, rewind_points(harness.session)[1], code=True, conversation=True)

    assert done.draft == "add new.py" and done.session_id != old_id
    assert (project_dir / "app.py").read_text() == "version = 3\n" and not (project_dir / "new.py").exists()
    texts = [
        b.get("text") for m in harness.session.agent.messages for b in m["content"] if b["type"] == "text"
    ]
    assert texts == ["bump the version", "Bumped."]
    api_env.stream_replies.append(text_reply("Again."))
    assert harness.turn("something else").reason == "done"
    assert api_env.requests[-1].validation_error is None
    harness.session.transcript.close()
    assert len(load_transcript(old_file).messages) == 16  # the session rewound in stays whole
    rewound = load_transcript(harness.session.transcript.writer.path)
    assert len(rewound.messages) == 8 and {c.turn for c in rewound.checkpoints} == {0}


def test_checkpoints_survive_a_resume(harness: Harness, api_env: FakeAnthropic, project_dir: Path) -> None:
    three_turns(harness, api_env, project_dir)
    harness.session.transcript.close()
    [summary] = list_sessions(harness.session.settings.sessions_dir)
    later = Harness().start()
    finish_resume(later.session, open_session(later.session, summary))

    [first, *_] = rewind_points(later.session)
    rewind(later.session, first, code=True, conversation=False)

    assert (project_dir / "app.py").read_text() == "version = 1\n"


def test_a_file_too_large_to_keep_is_changed_and_said_not_restorable(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    big = project_dir / "big.txt"
    big.write_bytes(b"x" * (MAX_KEPT_BYTES + 1))
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": "big.txt", "content": "small\n"}), text_reply("ok")]
    )
    harness.answers.append("y")
    harness.turn("shrink it")

    [point] = rewind_points(harness.session)
    done = rewind(harness.session, point, code=True, conversation=False)

    assert big.read_text() == "small\n"
    assert done.restored is not None and done.restored.written == []
    [problem] = done.restored.problems
    assert "big.txt left as it is" in problem and "MB a checkpoint keeps" in problem


def test_checkpoints_are_private_and_go_with_their_transcript(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path, umask: int
) -> None:
    three_turns(harness, api_env, project_dir)
    recorder = harness.session.transcript
    side = recorder.sessions_dir / f"{recorder.session_id}.files"
    assert side.stat().st_mode & 0o777 == 0o700
    assert all(kept.stat().st_mode & 0o777 == 0o600 for kept in side.iterdir())
    recorder.close()
    from mini_claude.sessions.retention import remove_expired_sessions

    os.utime(recorder.writer.path, (0, 0))
    report = remove_expired_sessions(recorder.sessions_dir, retention_days=1, keep=None)
    assert report.removed == [recorder.session_id] and not side.exists()


def test_a_folder_turned_into_a_link_is_not_written_through(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path, tmp_path: Path
) -> None:
    (project_dir / "src").mkdir()
    (project_dir / "src" / "app.py").write_text("one\n")
    api_env.stream_replies.extend(
        [
            tool_reply("edit_file", {"file_path": "src/app.py", "old_string": "one", "new_string": "two"}),
            text_reply("ok"),
        ]
    )
    harness.answers.append("y")
    harness.turn("change it")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project_dir / "src").rename(project_dir / "old-src")
    (project_dir / "src").symlink_to(elsewhere)  # the folder now leads somewhere else

    [point] = rewind_points(harness.session)
    done = rewind(harness.session, point, code=True, conversation=False)

    assert done.restored is not None and done.restored.written == []
    assert "reached through a symlink" in done.restored.problems[0]
    assert list(elsewhere.iterdir()) == []


def test_a_side_folder_left_open_is_narrowed_and_kept_content_swapped_for_a_link_is_not_read(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path, tmp_path: Path
) -> None:
    (project_dir / "app.py").write_text("version = 1\n")
    api_env.stream_replies.extend([edit("app.py", "1", "2"), text_reply("Bumped.")])
    harness.answers.append("y")
    harness.turn("bump it")
    recorder = harness.session.transcript
    side = recorder.sessions_dir / f"{recorder.session_id}.files"
    [kept] = [entry for entry in side.iterdir() if len(entry.name) == 64]
    side.chmod(0o777)  # left open (an older version, a hand's chmod)
    decoy = tmp_path / "decoy"
    decoy.write_text("version = 1\n")  # the same bytes: only the link gives it away
    kept.unlink()
    kept.symlink_to(decoy)

    [point] = rewind_points(harness.session)
    done = rewind(harness.session, point, code=True, conversation=False)

    assert side.stat().st_mode & 0o777 == 0o700  # narrowed as soon as it was used
    assert done.restored is not None and done.restored.written == []
    assert "app.py left as it is" in done.restored.problems[0]
    assert (project_dir / "app.py").read_text() == "version = 2\n"


def test_a_turn_that_used_an_mcp_tool_is_marked_as_a_command_is(
    api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    write_user_servers(isolated_env, {"answers": server_command("answers", f"rewind-{uuid.uuid4().hex[:8]}")})
    harness = Harness(answers=["y", "y"]).start()
    harness.session.mcp.start()
    harness.session.mcp.wait_until_connected(60.0)
    api_env.stream_replies.extend(
        [
            tool_reply("mcp__answers__echo", {"text": "hi"}), text_reply("Echoed."),
            tool_reply("run_shell", {"command": "true"}), text_reply("Ran."),
        ]
    )  # fmt: skip
    try:
        harness.turn("echo hi")
        harness.turn("run true")
        points = rewind_points(harness.session)
        summary = rewind_summary(points[0], harness.session)
    finally:
        harness.session.close()

    assert [p.turn.ran for p in points] == [("MCP tools",), ("commands",)]
    assert [p.ran_since for p in points] == [("commands", "MCP tools"), ("commands",)]
    assert point_row(points[0], 80) == "echo hi · ran MCP tools"
    assert "  shell commands and MCP tools ran from then on: what they changed stays as it is" in summary


def test_a_custom_command_is_listed_and_given_back_as_the_user_typed_it(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "api.py").write_text("v = 1\n")
    command_file(project_dir, "bump", "Bump the version in api.py, then say $ARGUMENTS.\n")
    harness = configured_harness(answers=["y"])
    api_env.stream_replies.extend([edit("api.py", "v = 1", "v = 2"), text_reply("Bumped.")])
    found = invoked(harness.session, '/bump "done, &c"')
    assert found is not None
    run_prepared(harness.session, prepare(harness.session, *found), harness.turn)

    [point] = rewind_points(harness.session)
    done = rewind(harness.session, point, code=True, conversation=True)

    assert point.turn.text == '/bump "done, &c"'  # not the text the command sent the model
    assert point_row(point, 80) == '/bump "done, &c" · 1 file changed'
    assert done.draft == '/bump "done, &c"'  # back in the prompt, to run again
    assert (project_dir / "api.py").read_text() == "v = 1\n"
