"""Claude Code's prompt flags and the switches around instructions: `--append-system-prompt` (both
modes), `--system-prompt` (print mode: ours replaced, instructions and memory kept), automatic
memory off, `/status` naming where each value came from, and `/init` offering to keep
CLAUDE.local.md out of git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import main_calls, system_text


def print_system(cli: Cli, api_env: FakeAnthropic, *args: str) -> str:
    api_env.stream_replies.append(text_reply("ok"))
    result = cli.run(*args, "-p", "hi")
    assert result.returncode == 0, result.stderr
    return system_text(main_calls(api_env)[-1])


def test_append_system_prompt_goes_last(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_dir / "CLAUDE.md").write_text("Project notes.\n")
    system = print_system(cli, api_env, "--append-system-prompt", "Answer in French.")
    assert system.rstrip().endswith("Answer in French.")
    assert "You are mini-claude" in system and "Project notes." in system


def test_system_prompt_replaces_ours_and_keeps_instructions_and_memory(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "CLAUDE.md").write_text("Project notes.\n")
    system = print_system(cli, api_env, "--system-prompt", "You are a terse reviewer.")
    assert system.startswith("You are a terse reviewer.")
    assert "You are mini-claude" not in system and "# How to work" not in system
    assert "Project notes." in system and "# Memory" in system
    assert main_calls(api_env)[-1].tools, "the tools stay"


def test_system_prompt_in_the_repl_is_a_usage_error(cli: Cli, api_env: FakeAnthropic) -> None:
    with cli.terminal("--system-prompt", "x") as term:
        term.expect("--system-prompt is for print mode")
        assert term.wait_exit() == 2
    assert api_env.requests == []


def test_memory_off_leaves_out_index_recall_and_notes(cli: Cli, api_env: FakeAnthropic) -> None:
    cli.env["MINI_CLAUDE_MEMORY"] = "off"
    system = print_system(cli, api_env)
    assert "Automatic memory is off for this session" in system
    assert "memory-index" not in system
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("# we deploy on fridays")
        term.expect("Automatic memory is off")
        term.expect("the note was not saved")
    assert all(request.stream for request in api_env.requests)  # no side query was made


def test_status_says_where_each_value_came_from(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    (isolated_env / ".claude").mkdir()
    (isolated_env / ".claude/settings.json").write_text(
        json.dumps({"model": "file-model", "env": {"MINI_CLAUDE_CONTEXT_WINDOW": "50000"}})
    )
    (project_dir / "CLAUDE.local.md").write_text("mine\n")
    cli.env["MINI_CLAUDE_EARLY_RECALL"] = "off"
    with cli.terminal("--permission-mode", "acceptEdits", columns=160) as term:
        term.wait_until_ready()
        term.submit("/status")
        shown = term.expect(r"CLAUDE\.local\.md  \(local, 5 bytes\)")
    assert "Model: file-model  (~/.claude/settings.json)" in shown
    assert "Permission mode: accept-edits  (command-line flag)" in shown
    assert (
        "Context window: 50,000 tokens  (MINI_CLAUDE_CONTEXT_WINDOW (env in ~/.claude/settings.json))"
        in shown
    )
    assert "Early recall: off  (MINI_CLAUDE_EARLY_RECALL)" in shown
    assert "Memory: on  (default)" in shown
    assert f"Server: {api_env.base_url}  (ANTHROPIC_BASE_URL), credentials from ANTHROPIC_API_KEY" in shown
    assert "~/.claude/settings.json  (user: used)" in shown


def test_init_offers_to_ignore_claude_local_md(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project_dir)], check=True)
    (project_dir / ".gitignore").write_text("build/")  # no newline at its end
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": "CLAUDE.md", "content": "# Notes\n"}),
            text_reply("Wrote it."),
        ]
    )
    with cli.terminal("--dangerously-skip-permissions", columns=140) as term:
        term.wait_until_ready()
        term.submit("/init")
        term.expect(r"to \.gitignore\? \[y/N\]")
        term.type("y")
        term.expect(r"Added CLAUDE\.local\.md to \.gitignore\.")
        term.expect_prompt()
        term.submit("/init")  # ignored now: no question again
        api_env.stream_replies.append(text_reply("Nothing to change."))
        term.expect("Nothing to change.")
        shown = term.expect_prompt()
    assert (project_dir / ".gitignore").read_text() == "build/\nCLAUDE.local.md\n"
    assert "gitignore?" not in shown
