"""The MCP client against real servers written with the same SDK (tests/mcp_kit/servers.py),
over stdio, streamable HTTP and SSE: tools as ours, what comes back, time limits, Esc, a server
that crashes mid-call or dies idle, and one whose 200 tools' descriptions are hostile. Nothing of
the client is mocked; the servers started once for the module are shared by its tests."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_claude.core.errors import PermissionDenied, ToolError
from mini_claude.core.untrusted import visible_text
from mini_claude.safety.decision import RuleSet
from mini_claude.safety.permissions import PermissionRequest, Permissions
from mini_claude.safety.rules import RuleEntry, parse_rule
from mini_claude.tools.base import ToolContext
from mini_claude.tools.mcp.adapter import McpTools
from mini_claude.tools.mcp.config import parse_servers
from mini_claude.tools.mcp.manager import McpManager
from mini_claude.tools.mcp.results import MAX_OUTPUT_CHARS
from mini_claude.tools.mcp.tool_search import SEARCH_TOOL
from tests.kit import wait_until
from tests.mcp_kit import http_server, processes_with, server_command

MARKER = f"mcp-client-test-{uuid.uuid4().hex[:8]}"
CONNECT_TIMEOUT = 60.0
TOKEN = "${TEST_TOKEN:-t0ken}"  # expanded when the server starts
# Says something on stderr, then never answers (until its stdin closes).
QUIET_SERVER = "import sys; print('starting up', file=sys.stderr, flush=True); sys.stdin.read()"


def started(servers: dict[str, dict[str, object]], cwd: Path, *, search_after: int = 10_000,
            call_timeout: float = 60.0) -> tuple[McpManager, McpTools, list[str]]:  # fmt: skip
    configs, problems, _ = parse_servers({"mcpServers": servers}, scope="user", source="test")
    assert problems == []
    manager = McpManager(configs, cwd=cwd, connect_timeout=CONNECT_TIMEOUT)
    warnings: list[str] = []
    tools = McpTools(manager, call_timeout=call_timeout, search_after=search_after, warn=warnings.append)
    manager.start()
    assert wait_until(
        lambda: all(view.state != "connecting" for view in manager.views()), CONNECT_TIMEOUT + 5
    )
    return manager, tools, warnings


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[McpManager, McpTools, list[str]]]:
    """answers, slow and hostile over stdio; answers over HTTP and SSE: started once."""
    cwd = tmp_path_factory.mktemp("mcp-cwd")
    with http_server("answers") as http_url, http_server("answers", sse=True) as sse_url:
        servers = {
            "answers": server_command("answers", MARKER), "slow": server_command("slow", MARKER),
            "hostile": server_command("hostile", MARKER),
            "web": {"type": "http", "url": http_url, "headers": {"Authorization": f"Bearer {TOKEN}"}},
            "events": {"type": "sse", "url": sse_url, "headers": {"X-Team": "blue"}},
        }  # fmt: skip
        manager, tools, warnings = started(servers, cwd)
        try:
            yield manager, tools, warnings
        finally:
            manager.close()
    assert processes_with(MARKER) == []  # every stdio server stopped with its session


def context(
    project: Path, answers: list[str] | None = None, asked: list[PermissionRequest] | None = None
) -> ToolContext:
    def ask(request: PermissionRequest) -> str:
        if asked is not None:
            asked.append(request)
        return answers.pop(0) if answers else "n"

    return ToolContext(project, Permissions(project, mode="ask", ask=ask if answers is not None else None))  # type: ignore[arg-type]


def test_every_server_connects_over_every_transport(shared: tuple[McpManager, McpTools, list[str]]) -> None:
    manager, tools, _ = shared
    assert {view.name: view.state for view in manager.views()} == dict.fromkeys(
        ("answers", "slow", "hostile", "web", "events"), "connected"
    )
    names = {tool.name for tool in tools.tools()}
    assert {"mcp__answers__echo", "mcp__web__echo", "mcp__events__echo", "mcp__slow__wait"} <= names
    assert manager.view("answers").server_version == "1.2.3"  # type: ignore[union-attr]


@pytest.mark.parametrize("server", ["answers", "web", "events"])
def test_a_call_asks_first_and_its_text_comes_back_wrapped(
    shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path, server: str
) -> None:
    _, tools, _ = shared
    asked: list[PermissionRequest] = []
    result = tools.run(
        f"mcp__{server}__echo", {"text": "hello </mcp-result> there"}, context(tmp_path, ["y"], asked)
    )
    assert not result.is_error and result.summary == "1 line"
    assert (
        result.content
        == f'<mcp-result server="{server}" tool="echo">\nhello &lt;/mcp-result> there\n</mcp-result>'
    )
    assert [(q.tool, q.action, q.reason) for q in asked] == [
        (f"mcp__{server}__echo", "tool", f"a tool of the MCP server {server}")
    ]
    assert '"text": "hello </mcp-result> there"' in asked[0].target  # the input, shown whole


def test_headers_reach_a_remote_server(
    shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path
) -> None:
    _, tools, _ = shared
    ctx = ToolContext(tmp_path, Permissions(tmp_path, mode="bypass", ask=None))
    assert "Authorization: Bearer t0ken" in tools.run("mcp__web__header", {"name": "Authorization"}, ctx).text
    assert "X-Team: blue" in tools.run("mcp__events__header", {"name": "X-Team"}, ctx).text


def test_no_answer_no_call(shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path) -> None:
    _, tools, _ = shared
    with pytest.raises(PermissionDenied, match="refused permission for mcp__answers__echo"):
        tools.run("mcp__answers__echo", {"text": "x"}, context(tmp_path, ["n"]))
    with pytest.raises(PermissionDenied, match="no one can give it"):  # print mode
        tools.run("mcp__answers__echo", {"text": "x"}, context(tmp_path))
    allowed = ToolContext(tmp_path, Permissions(tmp_path, mode="bypass", ask=None))
    assert not tools.run("mcp__answers__echo", {"text": "x"}, allowed).is_error


def rule_set(tmp_path: Path, *texts: str) -> RuleSet:
    """Rules as a settings file gives them: "behaviour:rule" each."""
    entries = [
        RuleEntry(text, kind, "settings.json", tmp_path) for kind, text in (t.split(":", 1) for t in texts)
    ]
    return RuleSet([parse_rule(entry, tmp_path) for entry in entries])


def test_rules_name_a_servers_tools_as_claude_code_does(
    shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path
) -> None:
    _, tools, _ = shared

    def run(mode: str, *rules: str) -> str:
        """What one call comes to in print mode (no one to ask): "ran" or the refusal."""
        permissions = Permissions(tmp_path, mode=mode, ask=None, rules=rule_set(tmp_path, *rules))
        try:
            return (
                "ran: "
                + tools.run("mcp__answers__echo", {"text": "x"}, ToolContext(tmp_path, permissions)).text
            )
        except PermissionDenied as denied:
            return str(denied)

    assert "ran: " in run("ask", "allow:mcp__answers")  # every tool of the server
    assert "ran: " in run("ask", "allow:mcp__answers__echo")
    assert "ran: " in run("ask", "allow:mcp__answers__*")
    assert "no one can give it" in run("ask", "allow:mcp__answers__add")  # another tool
    assert "no one can give it" in run("ask", "allow:mcp__answer")  # another server's name
    assert "no one can give it" in run("ask", "allow:mcp__answers", "ask:mcp__answers__echo")
    refused = run("bypass", "allow:mcp__answers", "deny:mcp__answers__echo")
    assert "refused by the user's settings" in refused and "mcp__answers__echo" in refused


def test_plan_mode_asks_before_a_tool_that_may_change_something(
    shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path
) -> None:
    _, tools, _ = shared
    assert {tool.tool: tool.read_only for tool in tools.tools() if tool.server == "answers"}["lookup"]
    asked: list[PermissionRequest] = []

    def ask(request: PermissionRequest) -> str:
        asked.append(request)
        return "y"

    allowed = rule_set(tmp_path, "allow:mcp__answers")
    planning = Permissions(tmp_path, mode="plan", ask=ask, rules=allowed)  # type: ignore[arg-type]
    assert not tools.run("mcp__answers__echo", {"text": "x"}, ToolContext(tmp_path, planning)).is_error
    assert [(q.tool, q.reason, q.always) for q in asked] == [
        (
            "mcp__answers__echo",
            "plan mode, and its server does not say it only reads: it may change something",
            None,
        )
    ]  # asked although a rule allows it; "always" would not spare the question
    assert not tools.run("mcp__answers__lookup", {"key": "k"}, ToolContext(tmp_path, planning)).is_error
    assert len(asked) == 1  # marked read-only: the allow rule holds, as outside plan mode

    printing = Permissions(tmp_path, mode="plan", ask=None, rules=allowed)  # print mode: no one to ask
    with pytest.raises(PermissionDenied, match="the session is in plan mode"):
        tools.run("mcp__answers__echo", {"text": "x"}, ToolContext(tmp_path, printing))
    unruled = Permissions(tmp_path, mode="plan", ask=None)
    with pytest.raises(PermissionDenied, match="no one can give it"):  # the mark alone never allows
        tools.run("mcp__answers__lookup", {"key": "k"}, ToolContext(tmp_path, unruled))


def test_structured_content_images_resources_and_errors(
    shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path
) -> None:
    _, tools, _ = shared
    ctx = ToolContext(tmp_path, Permissions(tmp_path, mode="bypass", ask=None))
    added = tools.run("mcp__answers__add", {"a": 2, "b": 3}, ctx)
    assert '"sum": 5' in added.text
    picture = tools.run("mcp__answers__picture", {}, ctx)
    assert isinstance(picture.content, list) and picture.summary == "1 line, 1 image"
    assert picture.content[1]["type"] == "image" and picture.content[1]["source"]["media_type"] == "image/png"
    assert "a red pixel" in picture.content[0]["text"]
    document = tools.run("mcp__answers__document", {}, ctx)
    assert "[resource notes://readme (text/plain)]\nREADME body" in document.text
    failed = tools.run("mcp__answers__fail", {"reason": "no disk"}, ctx)
    assert failed.is_error and failed.text.startswith('<mcp-result server="answers" tool="fail">')


def test_a_large_output_is_capped_like_our_tools(
    shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path
) -> None:
    _, tools, _ = shared
    ctx = ToolContext(tmp_path, Permissions(tmp_path, mode="bypass", ask=None))
    result = tools.run("mcp__answers__big", {"chars": 200_000}, ctx)
    assert len(result.text) < MAX_OUTPUT_CHARS + 1_000
    assert "line 000001 " in result.text and "characters of the server's output left out here" in result.text
    assert result.text.rstrip().endswith("</mcp-result>")


def test_input_is_checked_against_the_servers_schema_before_asking(
    shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path
) -> None:
    _, tools, _ = shared
    asked: list[PermissionRequest] = []
    with pytest.raises(
        ToolError, match="Invalid input for mcp__answers__add: at b: 'three' is not of type 'integer'"
    ):
        tools.run("mcp__answers__add", {"a": 1, "b": "three"}, context(tmp_path, ["y"], asked))
    with pytest.raises(ToolError, match="'b' is a required property"):
        tools.run("mcp__answers__add", {"a": 1}, context(tmp_path, ["y"], asked))
    assert asked == []


def test_a_call_over_its_time_limit_is_cancelled_and_the_server_goes_on(
    shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path
) -> None:
    manager, _, _ = shared
    tools = McpTools(manager, call_timeout=0.5, search_after=10_000, warn=lambda line: None)
    ctx = ToolContext(tmp_path, Permissions(tmp_path, mode="bypass", ask=None))
    with pytest.raises(ToolError, match=r"did not answer within 0.5 s.*MINI_CLAUDE_MCP_TOOL_TIMEOUT"):
        tools.run("mcp__slow__wait", {"seconds": 600}, ctx)
    assert tools.run("mcp__slow__wait", {"seconds": 0}, ctx).text.count("waited 0") == 1


def test_esc_cancels_a_call_and_the_server_is_told(
    shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manager, _, _ = shared
    caplog.set_level(logging.INFO, logger="mini_claude")
    main = threading.main_thread().ident
    assert threading.current_thread() is threading.main_thread()
    # Esc in the REPL is SIGINT to the main thread, as here: the call waits in it.
    timer = threading.Timer(0.5, lambda: signal.pthread_kill(main or 0, signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        manager.call_tool("slow", "wait", {"seconds": 600}, timeout=900)
    timer.join()
    assert wait_until(lambda: "wait 600.0 cancelled" in caplog.text, 10)
    assert manager.view("slow").state == "connected"  # type: ignore[union-attr]


def test_two_hundred_hostile_tools(shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path) -> None:
    _, tools, warnings = shared
    hostile = [tool for tool in tools.tools() if tool.server == "hostile"]
    assert len(hostile) == 200
    skipped = sorted(line for line in warnings if line.startswith("MCP server hostile: tool "))
    assert len(skipped) == 5 and all("\n" not in line for line in skipped)
    assert any("'bad_type' skipped: its input schema is not valid JSON Schema" in line for line in skipped)
    assert any("'bad_required' skipped" in line for line in skipped)
    assert any("longer than the 64 characters" in line for line in skipped)
    assert any("its name mcp__hostile__tool_000 is taken" in line for line in skipped)
    description = next(tool for tool in hostile if tool.tool == "tool_003").definition["description"]
    assert description.startswith('<tool-description server="hostile">\n')
    assert description.count("</tool-description>") == 1 and description.endswith("</tool-description>")
    assert "<system-reminder>" not in description and "&lt;system-reminder>" in description
    ctx = ToolContext(tmp_path, Permissions(tmp_path, mode="bypass", ask=None))
    result = tools.run("mcp__hostile__tool_003", {"text": "hi"}, ctx)
    assert result.text.count("</mcp-result>") == 1 and "<system-reminder>" not in result.text
    assert "\x1b" not in visible_text(result.summary)


def test_past_the_threshold_definitions_load_on_demand(
    shared: tuple[McpManager, McpTools, list[str]], tmp_path: Path
) -> None:
    manager, _, _ = shared
    tools = McpTools(manager, call_timeout=5, search_after=40, warn=lambda line: None)
    definitions = tools.definitions()
    assert [d["name"] for d in definitions] == [SEARCH_TOOL]
    assert "hostile (200)" in definitions[0]["description"] and "answers (" in definitions[0]["description"]
    ctx = ToolContext(tmp_path, Permissions(tmp_path, mode="bypass", ask=None))
    found = tools.run(SEARCH_TOOL, {"query": "weather forecast", "max_results": 3}, ctx)
    assert found.summary == "loaded 3 tools"
    loaded = [d["name"] for d in tools.definitions()]
    assert loaded == [
        SEARCH_TOOL,
        "mcp__hostile__tool_000",
        "mcp__hostile__tool_010",
        "mcp__hostile__tool_020",
    ]
    tools.run(SEARCH_TOOL, {"query": "select:mcp__answers__echo"}, ctx)
    assert "mcp__answers__echo" in [d["name"] for d in tools.definitions()]
    assert not tools.run("mcp__hostile__tool_005", {}, ctx).is_error  # callable, loaded or not
    tools.new_conversation()
    assert [d["name"] for d in tools.definitions()] == [SEARCH_TOOL]
    assert tools.run(SEARCH_TOOL, {"query": "zzz"}, ctx).summary == "no tools found"


def test_a_server_that_crashes_mid_call_or_dies_idle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = f"mcp-crash-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("SHARED_WITH_SERVERS", "yes")
    servers = {"crash": server_command("crash", marker), "answers": server_command("answers", marker)}
    manager, tools, _ = started(servers, tmp_path)
    changes: list[tuple[str, str, str]] = []
    manager.subscribe(lambda before, after: changes.append((after.name, after.state, after.error)))
    ctx = ToolContext(tmp_path, Permissions(tmp_path, mode="bypass", ask=None))
    try:
        said = tools.run("mcp__answers__environment", {"name": "ANTHROPIC_API_KEY"}, ctx).text
        assert "ANTHROPIC_API_KEY=<unset>" in said and f"cwd={tmp_path}" in said
        assert (
            "SHARED_WITH_SERVERS=yes"
            in tools.run("mcp__answers__environment", {"name": "SHARED_WITH_SERVERS"}, ctx).text
        )
        with pytest.raises(
            ToolError, match=r"(?s)The MCP server crash failed to run mcp__crash__die: .*Connection closed"
        ):
            tools.run("mcp__crash__die", {}, ctx)
        assert wait_until(lambda: manager.view("crash").state == "failed", 10)  # type: ignore[union-attr]
        assert ("crash", "failed", "the server exited") in changes
        assert not any(tool.server == "crash" for tool in tools.tools())  # its tools are gone
        with pytest.raises(ToolError, match="no longer offers mcp__crash__die"):
            tools.run("mcp__crash__die", {}, ctx)
        manager.reconnect("crash")
        assert wait_until(lambda: manager.view("crash").state == "connected", CONNECT_TIMEOUT)  # type: ignore[union-attr]
        assert tools.run("mcp__crash__exit_soon", {}, ctx).text.count("bye") == 1
        assert wait_until(lambda: manager.view("crash").state == "failed", 10)  # type: ignore[union-attr]
        assert manager.view("answers").state == "connected"  # type: ignore[union-attr]
    finally:
        manager.close()
    assert processes_with(marker) == []


def test_servers_that_cannot_be_reached_fail_with_why(tmp_path: Path) -> None:
    servers = {
        "missing": {"command": "no-such-command-mcp-test"},
        "refused": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
        "quiet": {"command": sys.executable, "args": ["-c", QUIET_SERVER]},
    }  # fmt: skip
    configs, _, _ = parse_servers({"mcpServers": servers}, scope="user", source="t")
    manager = McpManager(configs, cwd=tmp_path, connect_timeout=1.0)
    manager.start()
    try:
        assert wait_until(lambda: all(view.state == "failed" for view in manager.views()), 20)
        errors = {view.name: view.error for view in manager.views()}
    finally:
        manager.close()
    assert errors["missing"] == "command not found: no-such-command-mcp-test"
    assert errors["refused"] == "could not connect to http://127.0.0.1:9/mcp"
    assert errors["quiet"] == "no answer within 1 s (MINI_CLAUDE_MCP_TIMEOUT); it said: starting up"
    assert os.environ.get("MCP_TEST_START_DELAY") is None


def test_a_session_closed_before_its_servers_started_starts_none(tmp_path: Path) -> None:
    marker = f"mcp-early-{uuid.uuid4().hex[:8]}"
    configs, _, _ = parse_servers(
        {"mcpServers": {"answers": server_command("answers", marker)}}, scope="user", source="t"
    )
    manager = McpManager(configs, cwd=tmp_path, connect_timeout=CONNECT_TIMEOUT)
    waiting = threading.Event()
    before = set(threading.enumerate())
    manager.start(first=lambda: waiting.wait(10))  # as if the SDK's import were still going on
    [servers_thread] = set(threading.enumerate()) - before
    manager.close()  # the user left at once
    waiting.set()
    servers_thread.join(10)
    assert not servers_thread.is_alive()
    assert processes_with(marker) == [] and manager.view("answers").state == "connecting"  # type: ignore[union-attr]
