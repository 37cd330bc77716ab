"""Memory in a whole session (agent, tools, recall thread) against the fake model server: what the
model is shown, and that recall never holds up a reply."""

from __future__ import annotations

import io
import os
import re
import time
from pathlib import Path

import pytest
from rich.console import Console

import mini_claude.ui.commands.memory.command  # noqa: F401  (registers /memory)
from mini_claude.core.events import MemoriesRecalled
from mini_claude.memory.recall.selection import MANIFEST_MAX_MEMORIES
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.ui.commands.registry import CommandContext, dispatch
from tests.agent_harness import Harness, hold_replies_until_recall_settles, wait_for_recalls
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import choose, main_calls, reminders_in, side_queries, system_text

QUESTION = "how do we deploy the payments service?"
BODY = "Deploys go through the release train on Thursdays.\n"


@pytest.fixture
def deploys(harness: Harness) -> Path:
    store = harness.session.store
    return store.save(
        name="deploys", description="how and when we deploy", memory_type="project", body=BODY
    ).path


def test_a_question_recalls_a_memory_into_the_same_turn(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path, deploys: Path
) -> None:
    (project_dir / "deploy.sh").write_text("echo deploy\n")
    api_env.plain_replies.append(choose(deploys.name))
    api_env.stream_replies.extend(
        [tool_reply("read_file", {"file_path": "deploy.sh"}), text_reply("On Thursdays.")]
    )

    api_env.responder = hold_replies_until_recall_settles

    ended = harness.turn(QUESTION)

    assert ended.reason == "done"
    api_env.wait_for_requests(3)
    [side_query] = side_queries(api_env)
    assert f"[project] {deploys.name} (today): how and when we deploy" in side_query.messages[0]["content"]
    first, second = main_calls(api_env)
    carrying = [r for r in (first, second) if reminders_in(r)]
    assert carrying, "no request of the turn carried the recalled memory"
    [reminder] = reminders_in(carrying[0])
    assert BODY.strip() in reminder and str(deploys) in reminder
    assert reminders_in(second) == [reminder]  # injected once, then kept in the conversation
    assert harness.of_type(MemoriesRecalled) == [MemoriesRecalled((deploys.name,))]


def test_a_slow_side_query_never_delays_the_reply_and_is_not_pinned_onto_the_next_message(
    harness: Harness, api_env: FakeAnthropic, deploys: Path
) -> None:
    """A recall chosen for one message that arrives after its turn ended is dropped: the next
    message, about something else, gets only what its own recall chooses; the memory is not spent
    and comes with a later message that is about it."""
    side_answer = choose(deploys.name, held=True)  # answered only once the turn is over
    api_env.plain_replies.append(side_answer)
    api_env.stream_replies.append(text_reply("Let me think about deploys."))

    harness.turn(QUESTION)

    api_env.wait_for_requests(2)  # the side query may even be sent after the turn is over
    [first] = main_calls(api_env)
    assert reminders_in(first) == []
    side_answer.release.set()
    assert wait_for_recalls()  # the recall settles after the turn's last call
    api_env.responder = hold_replies_until_recall_settles
    api_env.plain_replies.append(text_reply('{"selected_memories": []}'))
    api_env.stream_replies.append(text_reply("Lunch is at noon."))
    harness.turn("what time is lunch in the office today?")

    assert reminders_in(main_calls(api_env)[1]) == []
    assert harness.of_type(MemoriesRecalled) == []

    api_env.plain_replies.append(choose(deploys.name))
    api_env.stream_replies.extend([tool_reply("list_files", {}), text_reply("They go out on Thursdays.")])
    harness.turn("so when is the next deploy of payments?")

    [reminder] = reminders_in(main_calls(api_env)[3])
    assert BODY.strip() in reminder


def test_an_old_relevant_memory_is_offered_among_hundreds_of_newer_ones(
    harness: Harness, api_env: FakeAnthropic, deploys: Path
) -> None:
    now = time.time()
    os.utime(deploys, (now - 400 * 86_400, now - 400 * 86_400))
    for i in range(320):  # newer, about other things; written by hand, as another session might
        path = deploys.parent / f"project_billing_{i:03}.md"
        path.write_text(
            f"---\nname: billing {i}\ndescription: billing tests, part {i}\ntype: project\n---\nx\n"
        )
        os.utime(path, (now - i, now - i))
    api_env.plain_replies.append(choose(deploys.name))
    api_env.stream_replies.extend([tool_reply("list_files", {}), text_reply("On Thursdays.")])

    api_env.responder = hold_replies_until_recall_settles

    harness.turn(QUESTION)

    [side_query] = side_queries(api_env)
    manifest = side_query.messages[0]["content"].split("<memories>")[1].split("</memories>")[0]
    lines = manifest.strip().splitlines()
    assert len(lines) == MANIFEST_MAX_MEMORIES  # the newest ones would have left the old memory out
    assert re.fullmatch(
        rf"\[project\] {re.escape(deploys.name)} \(\d+ days ago\): how and when we deploy", lines[0]
    )
    assert any(BODY.strip() in reminder for reminder in reminders_in(main_calls(api_env)[-1]))


def test_memories_written_by_hand_show_up_in_the_next_sessions_system_prompt(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    folder = Harness().start().session.store.root
    folder.mkdir(parents=True)
    (folder / "user_role.md").write_text(
        "---\nname: role\ndescription: senior Go engineer\ntype: user\n---\nx\n"
    )
    (folder / "user_broken.md").write_text("---\nname: broken\nnever closed\n")
    api_env.plain_replies.append(text_reply('{"selected_memories": []}'))
    api_env.stream_replies.append(text_reply("Hi."))

    harness = Harness().start()
    harness.turn("hello there")

    system = system_text(main_calls(api_env)[0])
    assert "- **[role](user_role.md)** (user) — senior Go engineer" in system
    assert "user_broken.md" not in system
    assert "- **[role](user_role.md)**" in (folder / "MEMORY.md").read_text()


def test_a_new_project_session_creates_no_memory_folder(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("Hi."))

    harness.turn("hello there")

    assert "No memories saved yet" in system_text(main_calls(api_env)[0])
    assert not harness.session.store.root.exists()
    # The project's folder holds only the session's transcript and whose project it is.
    assert sorted(p.name for p in harness.session.store.root.parent.iterdir()) == ["project.json", "sessions"]
    assert side_queries(api_env) == []


def memory_command(harness: Harness, line: str) -> str:
    output = io.StringIO()
    ctx = CommandContext(
        console=Console(file=output, width=200),
        session=harness.session,
        renderer=None,  # type: ignore[arg-type]  (/memory prints through the console only)
        confirm=lambda question: True,
    )
    dispatch(line, ctx)
    return output.getvalue()


def test_memory_command_changes_rebuild_the_index(
    harness: Harness, deploys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store: MemoryStore = harness.session.store
    store.save(name="role", description="senior Go engineer", memory_type="user", body="x\n")
    monkeypatch.setenv("VISUAL", "sed -i s/senior/staff/")

    edited = memory_command(harness, "/memory edit role")
    removed = memory_command(harness, "/memory rm deploys")

    assert "the index was updated" in edited and "the index was updated" in removed
    index = (store.root / "MEMORY.md").read_text()
    assert "staff Go engineer" in index and "senior" not in index
    assert "deploys" not in index and not deploys.exists()
