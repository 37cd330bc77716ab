"""MCP configuration: Claude Code's `.mcp.json` entries read and checked (with `${VAR}` and
`${VAR:-default}`), the two files changed by `mcp add`/`remove` without losing anything, and
which project servers may start (folder trust, one approval per entry as written)."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from mini_claude.app.mcp.approvals import ApprovalStore, decision
from mini_claude.app.mcp.entries import EntryError, server_entry
from mini_claude.app.mcp.files import McpFileError, add_server, configured_servers, remove_server
from mini_claude.app.settings.configure import Flags, configure
from mini_claude.app.settings.trust import TrustStore
from mini_claude.core.config import ConfigError, Settings
from mini_claude.core.mcp_options import McpOptions
from mini_claude.tools.mcp.config import parse_server, parse_servers


def parsed(entry: object, environ: dict[str, str] | None = None, name: str = "db"):  # type: ignore[no-untyped-def]
    return parse_server(name, entry, scope="project", source=".mcp.json", environ=environ or {})


def test_a_stdio_entry_with_variables_expanded_everywhere() -> None:
    environ = {"BIN": "/opt/bin", "TOKEN": "s3cret", "EMPTY": ""}
    server = parsed(
        {"command": "${BIN}/db-server", "args": ["--token=${TOKEN}", "${PORT:-5432}", "${EMPTY:-fallback}"],
         "env": {"DB_TOKEN": "${TOKEN}", "LEVEL": 3}},
        environ,
    )  # fmt: skip
    assert (server.transport, server.command) == ("stdio", "/opt/bin/db-server")
    assert server.args == ("--token=s3cret", "5432", "fallback")
    assert server.env == {"DB_TOKEN": "s3cret", "LEVEL": "3"}
    assert server.command_line == "/opt/bin/db-server --token=s3cret 5432 fallback"


def test_remote_entries_by_type_or_by_url_alone() -> None:
    http = parsed({"type": "http", "url": "https://x.test/mcp", "headers": {"Authorization": "Bearer ${T}"}},
                  {"T": "abc"})  # fmt: skip
    assert (http.transport, http.url, dict(http.headers)) == (
        "http",
        "https://x.test/mcp",
        {"Authorization": "Bearer abc"},
    )
    assert parsed({"type": "sse", "url": "http://127.0.0.1:9/sse"}).transport == "sse"
    assert parsed({"url": "https://x.test/mcp"}).transport == "http"  # Claude Code's shorthand
    assert parsed({"type": "streamable-http", "url": "https://x.test/mcp"}).transport == "http"


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        (
            {"command": "x", "args": ["${MISSING}"]},
            "${MISSING} is not set: set it, or write ${MISSING:-default}",
        ),
        ({"type": "http", "url": "${MISSING}"}, "${MISSING} is not set"),
        ({"command": ""}, "command must be non-empty text"),
        ({"command": "x", "args": "--flag"}, "args must be a list"),
        ({"command": "x", "args": [1]}, "args must be text"),
        ({"command": "x", "env": {"BAD NAME": "1"}}, "'BAD NAME' is not a valid name"),
        ({"type": "websocket", "url": "ws://x"}, "type 'websocket' is not stdio, http or sse"),
        ({"type": "http", "url": "ftp://x"}, "must start with http:// or https://"),
        ({"type": "http", "url": "https://x", "headers": {"A": "b\r\nInjected: 1"}}, "line break"),
        ("npx server", "must be an object"),
        ({"command": "x\0y"}, "NUL"),
    ],
)
def test_an_entry_that_cannot_be_used_says_why_in_one_line(entry: object, says: str) -> None:
    servers, problems, unusable = parse_servers(
        {"mcpServers": {"db": entry}}, scope="user", source="mcp.json", environ={}
    )
    assert servers == [] and len(problems) == 1
    assert problems[0].startswith("mcp.json: server db") and says in problems[0]
    assert "\n" not in problems[0] and says in unusable["db"]


def test_names_that_could_not_be_part_of_a_tool_name_are_refused_and_the_others_kept() -> None:
    data = {
        "mcpServers": {"a b": {"command": "x"}, "x" * 41: {"command": "x"}, "ok-name_2": {"command": "x"}}
    }
    servers, problems, _ = parse_servers(data, scope="user", source="f", environ={})
    assert [server.name for server in servers] == ["ok-name_2"]
    assert len(problems) == 2 and all("letters, digits, - or _" in line for line in problems)
    assert parse_servers({"mcpServers": []}, scope="user", source="f")[1] == [
        "f: mcpServers must be an object of server name: settings: ignored"
    ]


def test_an_approval_covers_the_entry_as_written() -> None:
    first = parsed({"command": "x", "args": ["${A}"]}, {"A": "1"})
    assert first.fingerprint() == parsed({"command": "x", "args": ["${A}"]}, {"A": "2"}).fingerprint()
    assert (
        first.fingerprint() != parsed({"command": "x", "args": ["${A}", "--evil"]}, {"A": "1"}).fingerprint()
    )
    assert first.fingerprint() != parsed({"command": "x", "args": ["${A}"], "env": {"LD_PRELOAD": "/e.so"}},
                                         {"A": "1"}).fingerprint()  # fmt: skip


# --- the files ---------------------------------------------------------------------------


def test_add_and_remove_keep_every_other_key_and_server(tmp_path: Path, isolated_env: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".mcp.json").write_text(
        json.dumps({"$comment": "ours", "mcpServers": {"keep": {"command": "k"}}})
    )
    assert add_server("project", root, "db", {"command": "db", "args": []}) is False
    assert remove_server("project", root, "nothing") is False
    data = json.loads((root / ".mcp.json").read_text())
    assert data == {
        "$comment": "ours",
        "mcpServers": {"keep": {"command": "k"}, "db": {"command": "db", "args": []}},
    }
    assert remove_server("project", root, "db") is True
    assert json.loads((root / ".mcp.json").read_text())["mcpServers"] == {"keep": {"command": "k"}}
    assert not list(root.glob(".*lock*"))  # no lock file left in the repository


def test_the_user_file_is_private_whatever_the_umask(tmp_path: Path, isolated_env: Path, umask: int) -> None:
    add_server("user", tmp_path, "db", {"command": "db"})
    path = isolated_env / ".mini-claude" / "mcp.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_a_file_that_is_not_valid_json_is_never_overwritten(tmp_path: Path, isolated_env: Path) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"a": {"command": "x"},}}')
    with pytest.raises(McpFileError, match=r"line 1, column .*fix it by hand first"):
        add_server("project", tmp_path, "db", {"command": "db"})
    assert (tmp_path / ".mcp.json").read_text() == '{"mcpServers": {"a": {"command": "x"},}}'
    found = configured_servers(tmp_path)
    assert found.servers == {} and "invalid JSON at line 1" in found.problems[0]


def test_concurrent_adds_all_stay(tmp_path: Path, isolated_env: Path) -> None:
    threads = [
        threading.Thread(target=add_server, args=("user", tmp_path, f"s{n}", {"command": "x"}))
        for n in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    servers = json.loads((isolated_env / ".mini-claude" / "mcp.json").read_text())["mcpServers"]
    assert sorted(servers) == [f"s{n}" for n in range(8)]


def test_the_projects_server_wins_a_name_both_files_use(tmp_path: Path, isolated_env: Path) -> None:
    add_server("user", tmp_path, "db", {"command": "mine"})
    add_server("user", tmp_path, "other", {"command": "o"})
    add_server("project", tmp_path, "db", {"command": "theirs"})
    found = configured_servers(tmp_path)
    assert (found.servers["db"].command, found.servers["db"].scope) == ("theirs", "project")
    assert found.shadowed == ["db"] and found.servers["other"].scope == "user"


@pytest.mark.parametrize(
    ("words", "entry"),
    [
        (("stdio", ["npx", "-y", "pkg"], ["K=V=W"], []),
         {"type": "stdio", "command": "npx", "args": ["-y", "pkg"], "env": {"K": "V=W"}}),
        (("http", ["https://x.test/mcp"], [], ["Authorization: Bearer ${T}"]),
         {"type": "http", "url": "https://x.test/mcp", "headers": {"Authorization": "Bearer ${T}"}}),
    ],
)  # fmt: skip
def test_mcp_add_words_make_claude_codes_entries(words: tuple, entry: dict) -> None:  # type: ignore[type-arg]
    assert server_entry("s", *words) == entry


@pytest.mark.parametrize(
    ("words", "says"),
    [
        (("stdio", [], [], []), "no command"),
        (("http", ["a", "b"], [], []), "one URL"),
        (("http", ["ftp://x"], [], []), "must start with http"),
        (("stdio", ["x"], ["NOEQUALS"], []), "-e takes KEY=VALUE"),
        (("http", ["https://x"], [], ["no colon"]), "--header takes 'Name: value'"),
        (("stdio", ["x"], [], ["A: b"]), "--header is for http and sse"),
    ],
)
def test_mcp_add_words_that_make_no_entry(words: tuple, says: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(EntryError, match=says):
        server_entry("s", *words)


# --- which project servers start ---------------------------------------------------------


def test_project_servers_start_only_trusted_and_approved(tmp_path: Path, isolated_env: Path) -> None:
    store = ApprovalStore()
    server = parsed({"command": "db-server"})
    user_server = parse_server("u", {"command": "x"}, scope="user", source="f", environ={})
    untrusted, trusted = Settings(folder_trusted=False), Settings(folder_trusted=True)
    assert decision(user_server, untrusted, store, tmp_path) == "approved"
    assert decision(server, untrusted, store, tmp_path) == "refused"
    assert decision(server, trusted, store, tmp_path) == "ask"
    store.remember(tmp_path, server, True)
    assert decision(server, trusted, store, tmp_path) == "approved"
    assert decision(server, trusted, store, tmp_path / "elsewhere") == "ask"
    changed = parsed({"command": "db-server", "args": ["--also-this"]})
    assert decision(changed, trusted, store, tmp_path) == "ask"  # another command line asks again
    store.remember(tmp_path, changed, False)
    assert decision(changed, trusted, store, tmp_path) == "refused"
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


def test_claude_codes_settings_keys_approve_and_refuse(tmp_path: Path, isolated_env: Path) -> None:
    store, server = ApprovalStore(), parsed({"command": "db-server"})
    enabled = Settings(folder_trusted=True, mcp=McpOptions(enabled=("db",)))
    assert decision(server, enabled, store, tmp_path) == "approved"
    assert (
        decision(server, Settings(folder_trusted=True, mcp=McpOptions(enable_all=True)), store, tmp_path)
        == "approved"
    )
    store.remember(tmp_path, server, True)
    disabled = Settings(folder_trusted=True, mcp=McpOptions(disabled=("db",)))
    assert decision(server, disabled, store, tmp_path) == "refused"


def test_an_untrusted_projects_settings_cannot_approve_its_own_servers(
    project_dir: Path, isolated_env: Path
) -> None:
    (project_dir / ".mcp.json").write_text(json.dumps({"mcpServers": {"db": {"command": "evil"}}}))
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude" / "settings.json").write_text(
        json.dumps({"enableAllProjectMcpServers": True, "enabledMcpjsonServers": ["db"]})
    )
    asked: list[list[str]] = []
    settings = configure(Flags(), lambda folder, would: asked.append(would) or None, TrustStore())
    assert not settings.folder_trusted and settings.mcp == McpOptions()
    would = asked[0]
    assert ".claude/settings.json: start every MCP server of .mcp.json without asking" in would
    assert ".claude/settings.json: start MCP servers of .mcp.json without asking: db" in would
    assert ".mcp.json: start MCP servers: db (each asks once before it first starts)" in would
    trusted = configure(Flags(trust_folder=True), None, TrustStore())
    assert trusted.mcp.enable_all and trusted.mcp.enabled == ("db",)


@pytest.mark.parametrize(
    ("variables", "says"),
    [
        ({"MINI_CLAUDE_MCP_TIMEOUT": "soon"}, "MINI_CLAUDE_MCP_TIMEOUT='soon' is not a number of seconds"),
        ({"MINI_CLAUDE_MCP_TOOL_TIMEOUT": "0"}, "must be a number of seconds above 0"),
        ({"MINI_CLAUDE_MCP_TOOL_TIMEOUT": "nan"}, "must be a number of seconds above 0"),
        ({"MINI_CLAUDE_MCP_TOOL_SEARCH": "sometimes"}, "is not on, off, auto or a number"),
    ],
)
def test_mcp_settings_that_cannot_be_used_stop_with_their_name(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], says: str
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)")):
        configure(Flags(), None, TrustStore())


@pytest.mark.parametrize(
    ("value", "after"), [("on", 0), ("off", 1_000_000), ("auto:10", 10), ("15", 15), ("", 40)]
)
def test_the_tool_search_threshold(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, value: str, after: int
) -> None:
    monkeypatch.setenv("MINI_CLAUDE_MCP_TOOL_SEARCH", value)
    assert configure(Flags(), None, TrustStore()).mcp.search_after == after


def test_reading_follows_the_settings_rules_for_a_project_file(project_dir: Path, isolated_env: Path) -> None:
    outside = isolated_env / "elsewhere.json"
    outside.write_text(json.dumps({"mcpServers": {"x": {"command": "x"}}}))
    os.symlink(outside, project_dir / ".mcp.json")  # a project's file may not lead out of it
    found = configured_servers(project_dir)
    assert found.servers == {} and len(found.problems) == 1


def test_prompt_arguments_are_given_in_order() -> None:
    from mcp_types import Prompt, PromptArgument

    from mini_claude.app.mcp.resources import prompt_arguments

    prompt = Prompt(
        name="review",
        arguments=[PromptArgument(name="file", required=True), PromptArgument(name="focus", required=False)],
    )
    assert prompt_arguments(prompt, 'src/a.py "speed and memory" too') == {
        "file": "src/a.py",
        "focus": "speed and memory too",
    }
    assert prompt_arguments(prompt, "only.py") == {"file": "only.py"}
    with pytest.raises(ValueError, match=r"missing file: /mcp__…__review <file> <focus>"):
        prompt_arguments(prompt, "")
    assert prompt_arguments(Prompt(name="bare"), "ignored words") == {}
