"""Memory across real sessions: the real program in a pseudo-terminal against the fake server."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.core.config import log_file, project_memory_dir
from tests.cli_harness import TIMEOUT, Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import main_calls, reminders_in, side_queries, system_text, wait_for_log_line

ROLE_MEMORY = """---
name: user is a data scientist
description: user works in pandas and notebooks; new to web backends
type: user
---
The user is a data scientist, fluent in pandas, new to Django.
"""


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    return project_memory_dir(str(project_dir))


def test_session_one_saves_a_memory_and_session_two_recalls_it(
    cli: Cli, api_env: FakeAnthropic, memory_dir: Path
) -> None:
    # Session 1: the model saves a memory with write_file; no permission question is asked.
    api_env.stream_replies.extend(
        [
            tool_reply(
                "write_file",
                {"file_path": str(memory_dir / "user_data_scientist.md"), "content": ROLE_MEMORY},
            ),
            text_reply("Noted: I will remember that."),
        ]
    )
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("I'm a data scientist, new to Django; remember that")
        shown = term.expect("Noted: I will remember that.")
        assert "Allow" not in shown
        assert "saved new memory" in shown
        term.submit("/memory")
        listing = term.expect(r"new to web backends")
        assert "1 memory:" in listing and "[user] user is a data scientist" in listing
        term.submit("/exit")
        assert term.wait_exit() == 0
    saved = memory_dir / "user_user_is_a_data_scientist.md"
    assert "fluent in pandas" in saved.read_text()
    index = (memory_dir / "MEMORY.md").read_text()
    assert (
        "- **[user is a data scientist](user_user_is_a_data_scientist.md)** (user) — user works in" in index
    )
    assert memory_dir.stat().st_mode & 0o777 == 0o700

    # Session 2: the index is in the system prompt, a side query picks the memory, and a later
    # request of the same turn carries it in a <system-reminder>.
    api_env.requests.clear()
    chosen = 'Sure:\n```json\n{"selected_memories": ["user_user_is_a_data_scientist.md"]}\n```'
    side_answer = text_reply(chosen, held=True)  # once the turn's first call is in
    first_answer = tool_reply("list_files", {"pattern": "*"}, held=True)  # once recall has chosen
    api_env.plain_replies.append(side_answer)
    api_env.stream_replies.extend(
        [first_answer, text_reply("Here is a pandas-friendly explanation of Django models.")]
    )
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("explain how Django models work for me")
        assert first_answer.holding.wait(TIMEOUT) and side_answer.holding.wait(TIMEOUT)
        side_answer.release.set()
        wait_for_log_line(log_file(), "memory recall chose ['user_user_is_a_data_scientist.md']")
        first_answer.release.set()
        term.expect("pandas-friendly explanation")
        term.expect_prompt()
        term.submit("/memory recalled")
        term.expect("user_user_is_a_data_scientist.md")
    calls = main_calls(api_env)
    [side_query] = side_queries(api_env)
    assert "user is a data scientist" in system_text(calls[0])
    assert "[user] user_user_is_a_data_scientist.md (today): user works in pandas" in str(side_query.messages)
    assert "explain how Django models work for me" in str(side_query.messages)
    assert side_query.tools == []
    [reminder] = reminders_in(calls[1])
    assert "fluent in pandas" in reminder and "saved today" in reminder
    assert str(memory_dir / "user_user_is_a_data_scientist.md") in reminder
    assert calls[1].validation_error is None


def test_a_slow_side_query_delays_neither_the_reply_nor_the_exit(
    cli: Cli, api_env: FakeAnthropic, memory_dir: Path
) -> None:
    memory_dir.mkdir(parents=True)
    (memory_dir / "user_role.md").write_text(ROLE_MEMORY)
    api_env.plain_replies.append(text_reply('{"selected_memories": ["user_role.md"]}', delay=60))
    api_env.stream_replies.append(text_reply("Answered without waiting."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("how do I structure this project?")
        term.expect("Answered without waiting.")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit(timeout=10) == 0  # the side query is still pending for ~a minute
    side_query = side_queries(api_env)[0]
    main_call = main_calls(api_env)[0]
    assert main_call.received_at - side_query.received_at < 5
    assert reminders_in(main_call) == []


def test_a_late_recall_is_not_pinned_onto_the_next_unrelated_message(
    cli: Cli, api_env: FakeAnthropic, memory_dir: Path
) -> None:
    """The recall for the first message settles after its turn: the next message, about something
    else, is sent without it (its own recall decides, and chooses nothing)."""
    memory_dir.mkdir(parents=True)
    (memory_dir / "user_role.md").write_text(ROLE_MEMORY)
    side_answer = text_reply('{"selected_memories": ["user_role.md"]}', held=True)  # after the turn
    api_env.plain_replies.extend([side_answer, text_reply('{"selected_memories": []}')])
    api_env.stream_replies.extend([text_reply("Quick first answer."), text_reply("Second answer.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("what should I learn first?")
        term.expect("Quick first answer.")
        term.expect_prompt()
        side_answer.release.set()
        wait_for_log_line(log_file(), "memory recall chose ['user_role.md']")  # settled after the turn
        term.submit("what is the capital of portugal?")
        assert "recalled" not in term.expect("Second answer.")
    calls = main_calls(api_env)
    assert reminders_in(calls[0]) == [] and reminders_in(calls[1]) == []
    assert all("fluent in pandas" not in str(call.messages) for call in calls)
