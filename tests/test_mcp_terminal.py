"""MCP servers as a person meets them: a project's `.mcp.json` asked about (trust, then one key
per server, its command line shown) and remembered until its entry changes; `/mcp`; a server
that fails in one line; `mini-claude mcp add|list|get|remove`; print mode calling a tool, as the
settings files' rules allow or deny it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.cli_harness import Cli, Terminal
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import main_calls
from tests.mcp_kit import SERVERS, processes_with, server_command, write_user_servers

CONNECTED = 60  # seconds a test allows for servers to start (a Python server takes one or two)


@pytest.fixture
def repository(project_dir: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(project_dir)], check=True)
    return project_dir


def mcp_when_settled(term: Terminal) -> str:
    """What `/mcp` shows once no server is connecting any more (it says how they are now)."""
    deadline = time.monotonic() + CONNECTED
    while True:
        term.submit("/mcp")
        term.expect(r"MCP servers \(")
        shown = term.expect_prompt()
        if " connecting · " not in shown or time.monotonic() > deadline:
            return shown
        time.sleep(0.3)


def write_project_servers(project: Path, servers: dict[str, object]) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_a_project_server_is_trusted_approved_once_and_asked_again_when_it_changes(
    cli: Cli, repository: Path, isolated_env: Path
) -> None:
    marker = f"mcp-term-{uuid.uuid4().hex[:8]}"
    write_project_servers(repository, {"answers": server_command("answers", marker)})
    with cli.terminal(columns=160) as term:
        asked = term.expect(r"Trust it\?")
        assert ".mcp.json: start MCP servers: answers (each asks once before it first starts)" in asked
        term.type("y")
        shown = term.expect(r"Start it\?")
        assert ".mcp.json (this project) has an MCP server, answers:" in shown
        assert f"runs: {sys.executable} {SERVERS} answers {marker}" in shown
        term.type("y")
        term.wait_until_ready()
        listing = mcp_when_settled(term)
        term.ctrl("d")
        assert term.wait_exit() == 0
    assert "✓ answers 1.2.3" in listing
    assert processes_with(marker) == []
    with cli.terminal(columns=160) as term:  # remembered: no question
        shown = term.expect_prompt()
        assert "Start it?" not in shown and "✓ answers" in mcp_when_settled(term)
        term.ctrl("d")
        term.wait_exit()
    write_project_servers(repository, {"answers": server_command("answers", marker, "--changed")})
    with cli.terminal(columns=160) as term:
        assert "--changed" in term.expect(r"Start it\?")
        term.type("n")
        term.wait_until_ready()
        assert "answers  not started: refused (remembered)" in mcp_when_settled(term)
        term.ctrl("d")
        term.wait_exit()
    assert processes_with(marker) == []


def test_a_server_that_fails_is_one_line_and_mcp_shows_why(
    cli: Cli, project_dir: Path, isolated_env: Path
) -> None:
    write_user_servers(
        isolated_env, {"broken": {"command": "no-such-mcp-server-command", "args": ["\x1b[2J"]}}
    )
    with cli.terminal(columns=160) as term:
        term.wait_until_ready()
        term.expect("MCP server broken failed: command not found: no-such-mcp-server-command")
        term.submit("/mcp")
        shown = term.expect("reconnect NAME")
        term.submit("/mcp reconnect broken")
        again = term.expect("did not connect")
    assert "✗ broken  failed: command not found" in shown and "\\x1b[2J" in shown
    assert "\x1b[2J" not in again


def test_print_mode_waits_for_its_servers_and_calls_a_tool(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    marker = f"mcp-print-{uuid.uuid4().hex[:8]}"
    write_user_servers(isolated_env, {"answers": server_command("answers", marker)})
    api_env.stream_replies.extend(
        [tool_reply("mcp__answers__add", {"a": 20, "b": 22}), text_reply("It is 42.")]
    )
    done = cli.run("-p", "--permission-mode", "bypass", "add 20 and 22", timeout=CONNECTED)
    assert (done.returncode, done.stdout) == (0, "It is 42.\n"), done.stderr
    assert "● mcp__answers__add" in done.stderr
    result = api_env.requests[-1].messages[-1]["content"][0]
    assert '"sum": 42' in result["content"] and not result.get("is_error")
    assert processes_with(marker) == []


def test_print_mode_cannot_approve_a_tool(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    write_user_servers(isolated_env, {"answers": server_command("answers")})
    api_env.stream_replies.extend([tool_reply("mcp__answers__echo", {"text": "x"}), text_reply("Could not.")])
    done = cli.run("-p", "echo x", timeout=CONNECTED)
    result = api_env.requests[-1].messages[-1]["content"][0]
    assert done.returncode == 0 and result["is_error"]
    assert "mcp__answers__echo may not run with" in result["content"]


def test_settings_rules_allow_and_deny_a_servers_tools_and_plan_mode_refuses_them(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    write_user_servers(isolated_env, {"answers": server_command("answers")})
    settings = {"permissions": {"allow": ["mcp__answers"], "deny": ["mcp__answers__echo"]}}
    (isolated_env / ".claude").mkdir()
    (isolated_env / ".claude" / "settings.json").write_text(json.dumps(settings))
    api_env.stream_replies.extend(
        [
            tool_reply("mcp__answers__add", {"a": 1, "b": 2}),
            tool_reply("mcp__answers__echo", {"text": "x"}),
            text_reply("Done."),
        ]
    )
    done = cli.run("-p", "add, then echo", timeout=CONNECTED)
    assert done.returncode == 0, done.stderr
    added, echoed = (request.messages[-1]["content"][0] for request in api_env.requests[-2:])
    assert '"sum": 3' in added["content"] and not added.get("is_error")  # mcp__answers allows it
    assert echoed["is_error"] and "refused by the user's settings" in echoed["content"]
    assert "deny rule mcp__answers__echo" in echoed["content"]

    api_env.stream_replies.extend([tool_reply("mcp__answers__add", {"a": 1, "b": 2}), text_reply("Plan.")])
    done = cli.run("-p", "--permission-mode", "plan", "add", timeout=CONNECTED)
    refused = api_env.requests[-1].messages[-1]["content"][0]
    assert done.returncode == 0 and refused["is_error"], done.stderr
    assert "mcp__answers__add may not run with" in refused["content"]
    assert "the session is in plan mode" in refused["content"]  # the allow rule does not spare it


def test_the_mcp_commands(cli: Cli, project_dir: Path, isolated_env: Path) -> None:
    answers = server_command("answers")
    added = cli.run("mcp", "add", "-e", "LEVEL=3", "answers", "--", answers["command"], *answers["args"])
    assert (
        added.returncode == 0
        and added.stdout == "Added stdio MCP server answers to ~/.mini-claude/mcp.json.\n"
    )
    web = cli.run(
        "mcp",
        "add",
        "--transport",
        "http",
        "-H",
        "Authorization: Bearer ${TOKEN}",
        "web",
        "https://mcp.test/mcp",
    )
    assert web.returncode == 0
    again = cli.run("mcp", "add", "answers", "--", "other")
    assert again.returncode == 1 and "already has a server answers" in again.stderr
    shared = cli.run("mcp", "add", "--scope", "project", "team", "--", "team-server", "--flag")
    assert shared.returncode == 0 and "approves it once" in shared.stdout
    assert json.loads((project_dir / ".mcp.json").read_text()) == {
        "mcpServers": {"team": {"type": "stdio", "command": "team-server", "args": ["--flag"]}}
    }
    listed = cli.run("mcp", "list", timeout=CONNECTED)
    lines = listed.stdout.splitlines()
    assert any(line.startswith("answers: ") and line.endswith("✓ connected (9 tools)") for line in lines), (
        listed
    )
    assert "web: not started: its entry: ${TOKEN} is not set: set it, or write ${TOKEN:-default}" in lines
    assert "team: not started: the folder is not trusted" in lines
    got = cli.run("mcp", "get", "web", timeout=CONNECTED)
    assert '  headers: {"Authorization": "Bearer ${TOKEN}"}' in got.stdout and "  type: http" in got.stdout
    assert cli.run("mcp", "remove", "web").stdout == "Removed MCP server web from ~/.mini-claude/mcp.json.\n"
    missing = cli.run("mcp", "remove", "web")
    assert missing.returncode == 1 and "no MCP server named web" in missing.stderr
    usage = cli.run("mcp", "add", "nothing")
    assert usage.returncode == 2 and "no command: mini-claude mcp add nothing -- COMMAND" in usage.stderr


def test_a_resource_attached_and_a_prompt_sent(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    write_user_servers(isolated_env, {"answers": server_command("answers")})
    api_env.stream_replies.extend([text_reply("Noted: milk."), text_reply("Reviewed.")])
    with cli.terminal(columns=160) as term:
        term.wait_until_ready()
        mcp_when_settled(term)
        term.submit("what do my notes say? @answers:notes://readme.")
        assert "Attached @answers:notes://readme (" in term.expect("Noted: milk.")
        term.expect_prompt()
        term.submit("/mcp__answers__review security and speed")
        term.expect("Reviewed.")
        term.submit("@answers:notes://nothing-here")
        refused = term.expect("back in the prompt")
    first, second = main_calls(api_env)
    attached = first.messages[-1]["content"][0]["text"]
    assert (
        '<mcp-resource server="answers" uri="notes://readme">' in attached
        and "Remember the milk." in attached
    )
    assert first.messages[-1]["content"][-1]["text"] == "what do my notes say? @answers:notes://readme."
    sent = second.messages[-1]["content"][-1]["text"]
    said = "Review the code, focusing on security and speed."
    assert sent == f'<mcp-prompt server="answers" prompt="review">\n{said}\n</mcp-prompt>'
    assert "@answers:notes://nothing-here not attached:" in refused
