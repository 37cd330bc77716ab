"""Tidy reads past sessions for what was never saved, and reads of them only what the user typed
(sessions/typed_input.py, the definition the session list uses): never a `!command`'s output, an
`@file`'s content, a recalled memory, a notice, a tool result or a compaction summary, each of
which sits in the user's turn of the conversation as text the model read."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import pytest

from mini_claude.agent.request_view import summary_block
from mini_claude.app.mentions import ATTACHMENT_TAG
from mini_claude.core import prompts
from mini_claude.core.config import log_file, project_memory_dir, project_sessions_dir
from mini_claude.core.untrusted import wrap
from mini_claude.memory.recall.selection import reminder_text
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.tidy.review import TidyReview
from mini_claude.sessions.transcript.writer import TranscriptWriter
from mini_claude.ui.repl.shell_line import OUTPUT_TAG
from tests.adversarial.cases import case
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, RecordedRequest, Reply, text_reply, tool_reply
from tests.kit import choose, main_calls, memory_text, wait_for_log_line
from tests.tidy_kit import changes_answer, model, read_answer, seed, tidy_requests

CANARIES = {
    "env": "CANARY-ENV-4242",
    "file": "CANARY-FILE-7731",
    "memory": "CANARY-MEMORY-0918",
    "tool": "CANARY-TOOL-5150",
    "summary": "CANARY-SUMMARY-2207",
}


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    return project_memory_dir(str(project_dir))


def sessions_query(api_env: FakeAnthropic, store: MemoryStore, sessions_dir: Path) -> str:
    """What tidy sends the side model about the recent sessions."""
    api_env.responder = None
    api_env.plain_replies.extend([read_answer(), changes_answer()])
    TidyReview(store, model(api_env), sessions_dir=sessions_dir).propose()
    return tidy_requests(api_env)[-1]


def recall_lands_by_the_tool_turn(api_env: FakeAnthropic, request: RecordedRequest) -> Reply | None:
    """Every side query chooses the canary memory. A recall that settles after its message's turn
    is not pinned onto the next one, so on a busy machine every recall of the session could miss:
    the tool turn's first reply waits until that turn's recall has settled (the REPL's debug log
    says so), and the memory then goes in with the turn's next request."""
    if not request.stream:
        return choose("project_canary.md")
    last = str(request.messages[-1]["content"])
    recalled = any(CANARIES["memory"] in str(earlier.body) for earlier in main_calls(api_env))
    if "and read tool.txt" in last and "tool_result" not in last and not recalled:
        wait_for_log_line(log_file(), "for 'and read tool.txt'")
    return None


@case(
    "memory", "tidy reads of a real session what was typed: no !cat .env output, @file, memory or tool text"
)
def test_a_real_sessions_added_text_never_reaches_tidy_as_the_users(
    api_env: FakeAnthropic, project_dir: Path, memory_dir: Path
) -> None:
    store = seed(
        memory_dir, {"project_canary.md": memory_text("canary", "a memory", body=CANARIES["memory"])}
    )
    (project_dir / ".env").write_text(f"API_TOKEN={CANARIES['env']}\n")
    (project_dir / "notes.txt").write_text(f"{CANARIES['file']}\n")
    (project_dir / "tool.txt").write_text(f"{CANARIES['tool']}\n")
    api_env.responder = partial(recall_lands_by_the_tool_turn, api_env)
    api_env.stream_replies.extend(
        [
            text_reply("Noted."),
            text_reply("Summarized."),
            tool_reply("read_file", {"file_path": "tool.txt"}),
            text_reply("Read it."),
        ]
    )
    with Cli(project_dir).terminal(columns=120) as term:
        term.wait_until_ready()
        term.submit("!cat .env")
        term.expect(r"goes with your next message\)")
        term.submit("I prefer pytest over unittest")
        term.expect("Noted.")
        term.expect_prompt()
        term.submit("summarize @notes.txt please")
        term.expect("Summarized.")
        term.expect_prompt()
        term.submit("and read tool.txt")
        term.expect("Read it.")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0
    sessions_dir = project_sessions_dir(str(project_dir))
    [transcript] = sessions_dir.glob("*.jsonl")
    saved = transcript.read_text()
    assert all(canary in saved for canary in CANARIES.values() if canary != CANARIES["summary"])

    query = sessions_query(api_env, store, sessions_dir)

    assert "User: !cat .env\nI prefer pytest over unittest" in query
    assert "User: summarize @notes.txt please" in query and "User: and read tool.txt" in query
    assert "Assistant: Read it." in query
    assert not [name for name, canary in CANARIES.items() if canary in query]


@case("memory", "tidy reads no notice, compaction summary, shell output, folder or reminder as typed text")
def test_text_mini_claude_adds_is_never_read_as_typed(
    api_env: FakeAnthropic, project_dir: Path, memory_dir: Path
) -> None:
    store = seed(memory_dir, {"project_x.md": memory_text("x", "a memory")})
    sessions_dir = project_sessions_dir(str(project_dir))
    writer = TranscriptWriter(sessions_dir, cwd=project_dir, project=project_dir, model="m")
    inputs = prompts.load_toml("prompt_input.toml")
    output = wrap(OUTPUT_TAG, f"$ env\nTOKEN={CANARIES['env']}")
    shell = prompts.fill(inputs["shell_output"].strip(), output=output)
    listing = wrap(ATTACHMENT_TAG, CANARIES["file"], path="secrets")
    folder = prompts.fill(inputs["attached_folder"].strip(), path="secrets", content=listing)
    reminder = reminder_text(store.scan()[0], CANARIES["memory"], False, time.time())
    summary = summary_block([{"type": "text", "text": f"User: said {CANARIES['summary']}"}])
    writer.add("user", [{"type": "text", "text": shell}, {"type": "text", "text": "the first thing I typed"}])
    writer.add("assistant", [{"type": "text", "text": "First reply."}])
    writer.add_compaction([{"type": "text", "text": f"The user typed {CANARIES['summary']}"}], 2)
    writer.add("user", [summary, {"type": "text", "text": "typed after the compaction"}])
    writer.add_memories([{"type": "text", "text": reminder}], ["project_x.md"])
    writer.add("assistant", [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}])
    writer.add(
        "tool_results", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": CANARIES["tool"]}]
    )
    writer.add("notice", [{"type": "text", "text": prompts.notice("user_interrupted")}])
    writer.add("user", [{"type": "text", "text": folder}, {"type": "text", "text": "last thing typed"}])
    writer.add("assistant", [{"type": "text", "text": "Last reply."}])
    writer.close()

    query = sessions_query(api_env, store, sessions_dir)

    assert "User: !env\nthe first thing I typed\nAssistant: First reply." in query
    assert "User: typed after the compaction\nUser: last thing typed\nAssistant: Last reply." in query
    assert "interrupted" not in query and "compacted" not in query
    assert not [name for name, canary in CANARIES.items() if canary in query]
