"""MCP servers in a whole session against the fake model: their tools in the requests, a call
asked about and answered (a picture as an image block), a server that dies told in one line and
its tools gone from the next request, and the size of a request with 200 tools sent whole
against loaded on demand."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from mini_claude.core.events import Notice
from mini_claude.ui.conversation.transcript_text import conversation_entries
from tests.agent_harness import Harness
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import main_calls, wait_until
from tests.mcp_kit import processes_with, server_command, write_user_servers

CONNECT_S = 60.0


def connected(harness: Harness) -> Harness:
    harness.session.mcp.start()
    harness.session.mcp.wait_until_connected(CONNECT_S)
    return harness


def test_an_mcp_tool_in_a_turn(api_env: FakeAnthropic, project_dir: Path, isolated_env: Path) -> None:
    marker = f"mcp-session-{uuid.uuid4().hex[:8]}"
    write_user_servers(isolated_env, {"answers": server_command("answers", marker)})
    harness = connected(Harness(answers=["y"]).start())
    api_env.stream_replies.extend([tool_reply("mcp__answers__picture", {}), text_reply("A red pixel.")])
    try:
        ended = harness.turn("show me the picture")
    finally:
        harness.session.close()
    assert ended.reason == "done" and ended.final_text == "A red pixel."
    first, second = main_calls(api_env)
    offered = {tool["name"]: tool for tool in first.tools}
    assert {"read_file", "mcp__answers__echo", "mcp__answers__picture"} <= set(offered)
    assert offered["mcp__answers__echo"]["description"] == (
        '<tool-description server="answers">\nEcho the text back.\n</tool-description>'
    )
    assert [(q.tool, q.action) for q in harness.questions] == [("mcp__answers__picture", "tool")]
    agent = harness.session.agent  # the transcript view (Ctrl+O) and /export name the picture
    [output] = [
        e for e in conversation_entries(agent.messages, agent.tools.summarize_call) if e.kind == "output"
    ]
    assert output.text.endswith("[image]")
    [result] = [b for b in second.messages[-1]["content"] if b["type"] == "tool_result"]
    assert second.validation_error is None
    assert [part["type"] for part in result["content"]] == ["text", "image"]
    assert result["content"][1]["source"]["media_type"] == "image/png"
    assert processes_with(marker) == []


def test_a_server_that_dies_is_one_line_and_its_tools_leave(
    api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    write_user_servers(isolated_env, {"crash": server_command("crash")})
    notices: list[str] = []
    harness = Harness(
        answers=["y"], on_event=lambda e: notices.append(e.text) if isinstance(e, Notice) else None
    )
    connected(harness.start())
    api_env.stream_replies.extend(
        [tool_reply("mcp__crash__die", {}), text_reply("It crashed."), text_reply("Without it then.")]
    )
    try:
        harness.turn("crash it")
        # Told from the servers' thread as soon as it is noticed: it may come after the turn.
        assert wait_until(lambda: any(text.startswith("MCP server crash") for text in notices), 10)
        harness.turn("again")
    finally:
        harness.session.close()
    first, second, third = main_calls(api_env)
    [result] = [b for b in second.messages[-1]["content"] if b["type"] == "tool_result"]
    assert result["is_error"] and "Connection closed" in result["content"]
    lines = [text for text in notices if text.startswith("MCP server crash failed")]
    assert lines == ["MCP server crash failed: the server exited; its 2 tools are gone (/mcp to reconnect)"]
    assert "mcp__crash__die" in {tool["name"] for tool in first.tools}
    assert not any(tool["name"].startswith("mcp__crash__") for tool in third.tools)


@pytest.mark.parametrize("search", ["off", "auto"])
def test_two_hundred_tools_sent_whole_or_on_demand(
    api_env: FakeAnthropic, project_dir: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch,
    search: str, record_property: object,
) -> None:  # fmt: skip
    monkeypatch.setenv("MINI_CLAUDE_MCP_TOOL_SEARCH", search)
    write_user_servers(isolated_env, {"hostile": server_command("hostile")})
    harness = connected(Harness().start())
    api_env.stream_replies.extend([text_reply("ok")])
    try:
        harness.turn("hello")
    finally:
        harness.session.close()
    [request] = main_calls(api_env)
    size = len(json.dumps(request.body))
    tools = [tool["name"] for tool in request.tools]
    print(f"\nrequest with 200 MCP tools, tool search {search}: {size:,} bytes, {len(tools)} tools")
    built_in = len([name for name in tools if not name.startswith("mcp")])  # the skill tool only with skills
    assert 0 < built_in <= len(harness.session.agent.tools.names)
    if search == "off":
        assert len(tools) == built_in + 200 and size > 60_000
    else:  # the built-in tools and the search tool: a few KB instead of tens
        assert tools[-1] == "mcp_tool_search" and len(tools) == built_in + 1 and size < 20_000


def test_a_transcript_keeps_a_pictures_tool_result() -> None:
    from mini_claude.sessions.loading.content import ContentProblem, checked_content

    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    block = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "a"}, image],
    }
    assert checked_content([block], "user") == [block]
    with pytest.raises(ContentProblem, match="not text or images"):
        checked_content([{**block, "content": [{"type": "image", "source": {"type": "url"}}]}], "user")


def test_completion_of_resources_and_prompts(
    api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from mini_claude.app.mcp.resources import resource_uris
    from mini_claude.ui.commands import mcp  # noqa: F401 - it registers /mcp and the servers' prompts
    from mini_claude.ui.commands.registry import CommandCompleter
    from mini_claude.ui.repl.mention_completion import MentionCompleter

    write_user_servers(isolated_env, {"answers": server_command("answers")})
    harness = connected(Harness().start())
    try:
        mentions = MentionCompleter(project_dir, lambda: resource_uris(harness.session.mcp))

        def completed(completer: object, text: str) -> list[str]:
            found = completer.get_completions(Document(text), CompleteEvent())  # type: ignore[attr-defined]
            return [item.text for item in found]

        assert completed(mentions, "read @ans") == ["@answers:"]
        assert completed(mentions, "read @answers:notes://r") == ["@answers:notes://readme"]
        assert sorted(completed(mentions, "read @answers:")) == [
            "@answers:notes://readme",
            "@answers:notes://todo",
        ]
        commands = CommandCompleter(harness.session)
        assert completed(commands, "/mcp__") == ["/mcp__answers__review"]
        assert "/mcp" in completed(commands, "/mc")
    finally:
        harness.session.close()
