"""Sessions saved as they happen: a whole session (agent, tools, recall) against the fake model
server, and what its transcript holds afterwards, read back with the real loader."""

from __future__ import annotations

import io
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mini_claude.core.events import ContextCompacted, Event, MessageAdded, Notice
from mini_claude.sessions.catalog import list_sessions
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.ui.commands import model  # noqa: F401 - registers /model
from mini_claude.ui.commands.registry import CommandContext, dispatch
from mini_claude.ui.render.console import make_renderer
from tests.agent_harness import Harness, wait_for_recalls
from tests.fake_api import FakeAnthropic, text_reply, tool_reply

OLD = time.time() - 100 * 86_400


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def command(harness: Harness, line: str) -> str:
    output = io.StringIO()
    console = Console(file=output, width=100)
    ctx = CommandContext(console, harness.session, make_renderer(console, plain=True), lambda question: True)
    dispatch(line, ctx)
    return output.getvalue()


@pytest.fixture
def harness(api_env: FakeAnthropic, project_dir: Path) -> Harness:
    return Harness().start(permission_mode="bypass")


def test_the_transcript_holds_exactly_what_was_said(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "notes.txt").write_text("ship on friday\n")
    memory = harness.session.store.save(
        name="release day", description="when we ship", memory_type="project", body="Fridays.\n"
    ).path

    def hold_until_recalled(event: Event) -> None:
        if isinstance(event, MessageAdded) and event.kind == "user":
            assert wait_for_recalls(timeout=30)  # so the reminder goes in before the first call

    harness.on_event = hold_until_recalled
    api_env.plain_replies.append(text_reply(f'{{"selected_memories": ["{memory.name}"]}}'))
    api_env.stream_replies.extend(
        [tool_reply("read_file", {"file_path": "notes.txt"}, text="Reading."), text_reply("On Friday.")]
    )

    harness.turn("when do we ship the release?")

    path = harness.session.transcript.writer.path
    kinds = [(record["type"], record.get("files")) for record in records(path)]
    assert kinds == [
        ("session", None),
        ("user", None),
        ("memories", [memory.name]),
        ("assistant", None),
        ("tool_results", None),
        ("assistant", None),
    ]
    loaded = load_transcript(path)
    assert loaded.messages == harness.session.agent.messages
    assert loaded.recalled_files == [memory.name]
    assert "ship on friday" in json.dumps(loaded.messages[2])  # the tool's output, whole
    assert loaded.problems == [] and loaded.repairs == []
    assert loaded.header.cwd == str(project_dir.resolve())


def test_nothing_said_leaves_no_file(harness: Harness) -> None:
    command(harness, "/help")
    harness.session.transcript.close()

    assert list_sessions(harness.session.settings.sessions_dir) == []


def test_clear_starts_a_new_file_and_the_old_one_stays(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([text_reply("First answer."), text_reply("Second answer.")])
    harness.turn("first question")
    first = harness.session.transcript.writer.path

    assert "Started a new conversation" in command(harness, "/clear")
    harness.turn("second question")
    second = harness.session.transcript.writer.path

    assert first != second
    assert [m["content"][0]["text"] for m in load_transcript(first).messages] == [
        "first question",
        "First answer.",
    ]
    assert [m["content"][0]["text"] for m in load_transcript(second).messages] == [
        "second question",
        "Second answer.",
    ]
    assert len(api_env.requests[1].messages) == 1  # the model too sees only the new conversation


def test_two_sessions_at_once_write_two_files(api_env: FakeAnthropic, project_dir: Path) -> None:
    one, two = Harness().start(), Harness().start()
    api_env.stream_replies.extend([text_reply("A1"), text_reply("B1"), text_reply("A2"), text_reply("B2")])

    for harness, text in ((one, "a1"), (two, "b1"), (one, "a2"), (two, "b2")):
        harness.turn(text)

    texts = {
        summary.id: [m["content"][0]["text"] for m in load_transcript(summary.path).messages]
        for summary in list_sessions(one.session.settings.sessions_dir)
    }
    assert texts == {
        one.session.transcript.session_id: ["a1", "A1", "a2", "A2"],
        two.session.transcript.session_id: ["b1", "B1", "b2", "B2"],
    }


def test_a_write_failure_is_one_warning_and_the_session_goes_on(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    sessions_dir = harness.session.settings.sessions_dir
    sessions_dir.parent.mkdir(parents=True)
    sessions_dir.write_text("a file where the folder should be\n")
    api_env.stream_replies.extend([text_reply("One."), text_reply("Two.")])

    first = harness.turn("hello there")
    warnings = harness.of_type(Notice)
    second = harness.turn("and again")

    assert first.reason == second.reason == "done" and second.final_text == "Two."
    assert [w.level for w in warnings] == ["warning"]
    assert "Session not saved" in warnings[0].text and "not a folder" in warnings[0].text
    assert harness.of_type(Notice) == []  # said once, not at every message
    assert sessions_dir.read_text() == "a file where the folder should be\n"


def test_a_model_change_and_a_compaction_are_saved(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([text_reply("One."), text_reply("Two.")])
    harness.turn("hello there")
    command(harness, "/model claude-other")
    summary = ({"type": "text", "text": "The user said hello."},)
    harness.session.agent.conversation.save(  # the save step, as a compaction takes it
        ContextCompacted(900, 120, summary, replaced=2, focus="greetings", trigger="manual")
    )
    harness.turn("and now?")

    loaded = load_transcript(harness.session.transcript.writer.path)
    assert loaded.model == "claude-other"
    assert loaded.last_compaction is not None
    assert loaded.last_compaction.summary == list(summary)
    assert (loaded.last_compaction.replaced, loaded.last_compaction.focus) == (2, "greetings")
    assert api_env.requests[1].model == "claude-other"


def test_old_sessions_are_removed_at_start_but_never_the_one_in_use(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.extend([text_reply("Old."), text_reply("Recent.")])
    old, recent = Harness().start(), Harness().start()
    old.turn("an old question")
    recent.turn("a recent question")
    old.session.transcript.close()
    recent.session.transcript.close()
    for summary in list_sessions(old.session.settings.sessions_dir):
        os.utime(summary.path, (OLD, OLD))  # both last used 100 days ago
    os.utime(recent.session.transcript.writer.path)  # this one: now

    current = Harness().start()
    current.session.warm_up()
    left = _when_retention_is_done(current)

    assert left == {recent.session.transcript.session_id}


def _when_retention_is_done(harness: Harness) -> set[str]:
    for thread in threading.enumerate():
        if thread.name == "session-retention":
            thread.join(5)
            assert not thread.is_alive(), "retention did not finish"
    return {summary.id for summary in list_sessions(harness.session.settings.sessions_dir)}
