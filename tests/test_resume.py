"""Resuming a saved session in a whole session (agent, recall, transcript) against the fake model
server: what the model is sent afterwards, where it is saved, what is not recalled twice."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from mini_claude.app.resume import (
    Resumed,
    ResumeError,
    ResumeRequest,
    finish_resume,
    latest_session,
    named_session,
    open_session,
)
from mini_claude.app.session import Session
from mini_claude.core.config import project_sessions_dir
from mini_claude.core.events import Event, MessageAdded
from mini_claude.sessions.catalog import SessionSummary
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.sessions.transcript.writer import TranscriptWriter
from tests.agent_harness import Harness, wait_for_recalls
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import main_calls, side_queries, system_text

OLD = time.time() - 100 * 86_400


def resume_session(session: Session, summary: SessionSummary) -> Resumed:
    """As `-r`, `--continue` and /resume do: take the transcript, then load it."""
    return finish_resume(session, open_session(session, summary))


def text_of(message: dict[str, Any]) -> str:
    return " ".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")


def saved_session(project: Path, *texts: str, session_id: str | None = None) -> TranscriptWriter:
    """A transcript of `texts`, alternately the user's and the model's (close it when done)."""
    sessions_dir = project_sessions_dir(project)
    writer = TranscriptWriter(sessions_dir, cwd=project, project=project, model="m", session_id=session_id)
    for index, text in enumerate(texts or ("a saved question", "a saved answer")):
        writer.add("user" if index % 2 == 0 else "assistant", [{"type": "text", "text": text}])
    return writer


def recall_first(harness: Harness) -> None:
    """Each recall settles before the turn's first call (so its reminder goes into that call)."""

    def hold(event: Event) -> None:
        if isinstance(event, MessageAdded) and event.kind == "user":
            assert wait_for_recalls(timeout=30)

    harness.on_event = hold


@pytest.fixture
def first(api_env: FakeAnthropic, project_dir: Path) -> Harness:
    """A session that read a file and answered, then ended (its transcript closed)."""
    (project_dir / "notes.txt").write_text("ship on friday\n")
    harness = Harness().start(permission_mode="bypass")
    api_env.stream_replies.extend(
        [tool_reply("read_file", {"file_path": "notes.txt"}, text="Reading."), text_reply("On Friday.")]
    )
    harness.turn("when do we ship?")
    harness.session.transcript.close()
    return harness


def test_a_resumed_conversation_goes_on_in_the_same_file_with_a_fresh_system_prompt(
    first: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    earlier = first.session.agent.messages
    # Changed since that session: the new system prompt must say so.
    (project_dir / "CLAUDE.md").write_text("Always answer in haiku.\n")
    first.session.store.save(name="role", description="staff Go engineer", memory_type="user", body="x\n")

    second = Harness().start()
    resumed = resume_session(second.session, latest_session(second.session.settings))
    api_env.stream_replies.append(text_reply("Friday, still."))
    second.turn("and now?")

    request = main_calls(api_env)[-1]
    assert request.validation_error is None
    assert request.messages[: len(earlier)] == earlier
    assert text_of(request.messages[-1]) == "and now?"
    assert "Always answer in haiku." in system_text(request)
    assert "staff Go engineer" in system_text(request)
    assert resumed.session_id == first.session.transcript.session_id
    assert second.session.transcript.writer.path == first.session.transcript.writer.path
    assert load_transcript(second.session.transcript.writer.path).messages == second.session.agent.messages


def test_memories_recalled_in_the_session_are_not_recalled_again(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    one = Harness().start()
    store = one.session.store
    deploys = store.save(name="deploys", description="how we deploy", memory_type="project", body="Thu.\n")
    oncall = store.save(name="oncall", description="who is on call", memory_type="project", body="Ana.\n")
    recall_first(one)
    api_env.plain_replies.append(text_reply(f'{{"selected_memories": ["{deploys.path.name}"]}}'))
    api_env.stream_replies.append(text_reply("On Thursdays."))
    one.turn("how do we deploy the service?")
    one.session.transcript.close()

    two = Harness().start()
    resume_session(two.session, latest_session(two.session.settings))
    recall_first(two)
    api_env.plain_replies.append(text_reply('{"selected_memories": []}'))
    api_env.stream_replies.append(text_reply("Ana is."))
    two.turn("and who is on call during the deploy?")

    first_query, second_query = side_queries(api_env)
    assert deploys.path.name in first_query.messages[0]["content"]
    manifest = second_query.messages[0]["content"]
    assert oncall.path.name in manifest and deploys.path.name not in manifest


def test_the_last_compaction_becomes_the_agents_current_summary(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    writer = TranscriptWriter(
        project_sessions_dir(project_dir), cwd=project_dir, project=project_dir, model="claude-test"
    )
    for index in range(4):
        writer.add("user" if index % 2 == 0 else "assistant", [{"type": "text", "text": f"message {index}"}])
    summary = [{"type": "text", "text": "The user asked twice about deploys."}]
    writer.add_compaction(summary, replaced=2, focus="deploys")
    writer.close()

    harness = Harness().start()
    resume_session(harness.session, latest_session(harness.session.settings))

    compaction = harness.session.agent.context.view.compaction
    assert compaction is not None
    assert (compaction.summary, compaction.replaced, compaction.focus) == (summary, 2, "deploys")
    assert len(harness.session.agent.messages) == 4  # the messages stay whole beside the summary
    harness.session.new_conversation()
    assert harness.session.agent.context.view.compaction is None


def test_a_session_open_in_another_mini_claude_goes_on_in_a_copy(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    elsewhere = Harness().start()
    api_env.stream_replies.append(text_reply("First."))
    elsewhere.turn("a question")  # its transcript stays open: that mini-claude is still running
    original = elsewhere.session.transcript.writer.path
    before = original.read_bytes()

    here = Harness().start()
    opened = open_session(here.session, latest_session(here.session.settings))
    resumed = finish_resume(here.session, opened)
    api_env.stream_replies.extend([text_reply("Here."), text_reply("There.")])
    here.turn("from here")
    elsewhere.turn("from there")

    assert opened.copied_from == elsewhere.session.transcript.session_id != resumed.session_id
    assert opened.note is not None and "is open in another mini-claude: continuing in a copy" in opened.note
    assert resumed.session_id[:12] in opened.note
    copy = load_transcript(here.session.transcript.writer.path)
    assert [text_of(m) for m in copy.messages] == ["a question", "First.", "from here", "Here."]
    assert [text_of(m) for m in load_transcript(original).messages] == [
        "a question",
        "First.",
        "from there",
        "There.",
    ]
    assert original.read_bytes().startswith(before)
    header = json.loads(here.session.transcript.writer.path.read_bytes().split(b"\n")[0])
    assert header["id"] == resumed.session_id and header["copied_from"] == opened.copied_from
    assert oct(here.session.transcript.writer.path.stat().st_mode & 0o777) == "0o600"


def test_a_session_that_cannot_be_resumed_changes_nothing(api_env: FakeAnthropic, project_dir: Path) -> None:
    harness = Harness().start()
    api_env.stream_replies.append(text_reply("Hi."))
    harness.turn("hello there")
    messages, current = list(harness.session.agent.messages), harness.session.transcript.session_id
    broken = project_sessions_dir(project_dir) / f"{'b' * 32}.jsonl"
    broken.write_text("not a transcript\n")
    settings = harness.session.settings

    with pytest.raises(
        ResumeError, match=r"bbbbbbbbbbbb cannot be resumed: .*no line of it is a session header or a record"
    ):
        resume_session(harness.session, named_session(settings, "bbbb"))
    with pytest.raises(ResumeError, match="is the one in use here"):
        resume_session(harness.session, named_session(settings, current))

    assert harness.session.agent.messages == messages
    assert harness.session.transcript.session_id == current
    assert broken.read_text() == "not a transcript\n"


def test_resume_request_from_the_command_line() -> None:
    assert not ResumeRequest().wanted
    assert ResumeRequest(latest=True).wanted and not ResumeRequest(latest=True).pick
    assert ResumeRequest(query="").pick and not ResumeRequest(query="ab12").pick


def test_an_old_session_can_be_resumed_and_is_not_removed_as_expired(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    writer = saved_session(project_dir)
    writer.close()
    os.utime(writer.path, (OLD, OLD))  # 100 days unused: past the 30-day retention

    harness = Harness().start()
    resume_session(harness.session, latest_session(harness.session.settings))
    harness.session.warm_up()  # starts the retention
    api_env.stream_replies.append(text_reply("Still here."))
    harness.turn("still there?")

    assert writer.path.exists()
    assert [text_of(m) for m in load_transcript(writer.path).messages][-2:] == ["still there?", "Still here."]


def test_a_transcript_spoiled_between_opening_and_loading_changes_nothing(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    saved = saved_session(project_dir)
    saved.close()
    harness = Harness().start()
    api_env.stream_replies.append(text_reply("Hi."))
    harness.turn("hello there")
    messages, current = list(harness.session.agent.messages), harness.session.transcript.session_id
    opened = open_session(harness.session, named_session(harness.session.settings, saved.session_id))
    opened.writer.path.write_text("spoiled by hand\n")  # while the REPL's prompt was up

    with pytest.raises(ResumeError, match="no line of it is a session header or a record"):
        finish_resume(harness.session, opened)

    assert harness.session.agent.messages == messages
    assert harness.session.transcript.session_id == current
    assert opened.writer.stopped == "closed"  # released for another mini-claude


def mid_turn(harness: Harness, text: str) -> None:
    """What a mini-claude in the middle of a turn has saved: the message, a call still running."""
    writer = harness.session.transcript.writer
    writer.add("user", [{"type": "text", "text": text}])
    call = {"type": "tool_use", "id": "toolu_running", "name": "run_shell", "input": {"command": "make"}}
    writer.add("assistant", [{"type": "text", "text": "Building."}, call])


def test_a_copy_of_a_session_in_use_takes_only_its_finished_exchanges(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    elsewhere = Harness().start()
    api_env.stream_replies.append(text_reply("First."))
    elsewhere.turn("a question")
    mid_turn(elsewhere, "build it")  # that mini-claude is running this turn now

    here = Harness().start()
    opened = open_session(here.session, latest_session(here.session.settings))
    resumed = finish_resume(here.session, opened)

    assert [text_of(m) for m in resumed.loaded.messages] == ["a question", "First."]
    assert resumed.warnings == []  # nothing of the running turn was copied to be "interrupted"
    assert opened.note is not None and "a copy of its finished exchanges" in opened.note
    header = json.loads(opened.writer.path.read_bytes().split(b"\n")[0])
    assert header["copied_from"] == elsewhere.session.transcript.session_id and header["copied_messages"] == 2


def test_several_continues_at_once_copy_the_session_they_mean_not_each_others_copies(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    first = Harness().start()
    api_env.stream_replies.append(text_reply("First."))
    first.turn("a question")
    original = first.session.transcript.session_id
    mid_turn(first, "first's next message")

    second = Harness().start()
    resume_session(second.session, latest_session(second.session.settings))
    mid_turn(second, "second's next message")  # its copy is the newest session now, and in use
    third = Harness().start()
    chosen = latest_session(third.session.settings)
    opened = open_session(third.session, chosen)

    assert chosen.id == original and opened.copied_from == original
    copied = finish_resume(third.session, opened).loaded.messages
    assert [text_of(m) for m in copied] == ["a question", "First."]

    # A copy with a finished exchange of its own is a conversation of its own: the newest one.
    api_env.stream_replies.append(text_reply("Second's answer."))
    second.turn("second's own question")
    fourth = Harness().start()
    assert latest_session(fourth.session.settings).id == second.session.transcript.session_id
