"""Folder trust: a project's settings that would do more than instruct (allow rules, `env`,
another mode, more folders, hooks) are asked about once, with one key, at the first REPL start
in the folder; the answer is remembered. Print mode never asks: only an earlier trust or
`--trust-folder` lets them count. Instructions are read either way."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mini_claude.app.settings.trust import TRUST_FILE, TrustStore
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import main_calls, memory_text, mode, prompt_index_lines, system_text
from tests.test_repl_keys import ESC

QUESTION = r"Trust it\?"
PROJECT_SETTINGS = {
    "env": {"ANTHROPIC_MODEL": "trusted-model"},
    "permissions": {"allow": ["Bash(npm test:*)", "Edit(src/**)"], "defaultMode": "acceptEdits"},
    "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "make fmt"}]}]},
}


@pytest.fixture
def project(project_dir: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(project_dir)], check=True)
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude/settings.json").write_text(json.dumps(PROJECT_SETTINGS))
    (project_dir / "CLAUDE.md").write_text("Project notes: read either way.\n")
    return project_dir


def trust_file(home: Path) -> Path:
    return home / ".mini-claude" / TRUST_FILE


def print_model(cli: Cli, api_env: FakeAnthropic, *args: str) -> tuple[str, str]:
    api_env.stream_replies.append(text_reply("ok"))
    result = cli.run(*args, "-p", "hi")
    assert result.returncode == 0, result.stderr
    request = main_calls(api_env)[-1]
    assert "Project notes: read either way." in system_text(request)
    return str(request.model), result.stderr


def test_print_mode_honours_only_an_earlier_trust_or_the_flag(
    cli: Cli, api_env: FakeAnthropic, project: Path, isolated_env: Path
) -> None:
    model, stderr = print_model(cli, api_env)
    assert model == "claude-sonnet-5-5"
    assert (
        "Ignored .claude/settings.json (allow rules, defaultMode, env, hooks): not a trusted folder" in stderr
    )
    assert not trust_file(isolated_env).exists()  # print mode decides nothing for later

    assert print_model(cli, api_env, "--trust-folder")[0] == "trusted-model"
    assert print_model(cli, api_env)[0] == "claude-sonnet-5-5"  # the flag was for that run only

    TrustStore().remember(project, True)
    model, stderr = print_model(cli, api_env)
    assert model == "trusted-model" and "Ignored" not in stderr


def test_the_repl_asks_once_shows_what_the_files_would_do_and_remembers_yes(
    cli: Cli, api_env: FakeAnthropic, project: Path, isolated_env: Path
) -> None:
    api_env.stream_replies.append(text_reply("hello back"))
    with cli.terminal(columns=120) as term:
        shown = term.expect(QUESTION)
        term.type("y")
        term.wait_until_ready()
        term.submit("hi")
        term.expect("hello back")
    assert f"The project files in {project} would do more than give instructions:" in shown
    assert ".claude/settings.json: allow without asking: Bash(npm test:*), Edit(src/**)" in shown
    assert ".claude/settings.json: start in accept-edits mode" in shown
    assert ".claude/settings.json: set environment variables: ANTHROPIC_MODEL=trusted-model" in shown
    hooks = "run commands on events (hooks): PostToolUse make fmt"
    assert f".claude/settings.json: {hooks}" in shown
    assert main_calls(api_env)[-1].model == "trusted-model"
    assert mode(trust_file(isolated_env)) == 0o600
    assert TrustStore().answer(project) is True

    with cli.terminal() as term:  # remembered: no question the next time
        shown = term.expect(r"/help for commands")
        term.expect_prompt()
    assert "Trust it?" not in shown


def test_no_is_remembered_and_the_parts_are_ignored_with_one_line(
    cli: Cli, api_env: FakeAnthropic, project: Path
) -> None:
    with cli.terminal(columns=120) as term:
        term.expect(QUESTION)
        term.type("n")
        term.wait_until_ready()
        term.submit("/status")
        shown = term.expect("Instruction files")
    assert "Folder trust: not trusted" in shown
    assert "Model: claude-sonnet-5-5  (default)" in shown
    assert TrustStore().answer(project) is False
    with cli.terminal(columns=160) as term:
        shown = term.expect(r"/help for commands")
        shown += term.expect(r"you chose not to trust")
    assert "Trust it?" not in shown


def test_esc_decides_nothing_and_the_next_start_asks_again(cli: Cli, project: Path) -> None:
    with cli.terminal(columns=120) as term:
        term.expect(QUESTION)
        term.type(ESC)
        term.wait_until_ready()
    assert TrustStore().answer(project) is None
    with cli.terminal(columns=120) as term:
        term.expect(QUESTION)


def test_settings_that_only_instruct_or_restrict_ask_nothing(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / ".claude").mkdir()
    restricting = {"model": "project-model", "permissions": {"deny": ["Read(./.env)"], "ask": ["Bash"]}}
    (project_dir / ".claude/settings.json").write_text(json.dumps(restricting))
    with cli.terminal(columns=120) as term:
        shown = term.expect(r"/help for commands")
        term.expect_prompt()
    assert "Trust it?" not in shown and "project-model" in shown


@pytest.fixture
def team_repo(project_dir: Path) -> Path:
    """A repository whose only project file that does more than instruct is a team memory."""
    subprocess.run(["git", "init", "-q", str(project_dir)], check=True)
    team = project_dir / ".mini-claude/memory"
    team.mkdir(parents=True)
    (team / "project_deploys.md").write_text(memory_text("deploys", "we ship on thursdays"))
    return project_dir


def test_the_trust_question_names_the_team_memories_and_yes_loads_them(
    cli: Cli, api_env: FakeAnthropic, team_repo: Path
) -> None:
    api_env.stream_replies.append(text_reply("hello back"))
    with cli.terminal(columns=140) as term:
        shown = term.expect(QUESTION)
        term.type("y")
        term.wait_until_ready()
        term.submit("hi")
        term.expect("hello back")
    assert ".mini-claude/memory: give the model 1 team memory (its memory index and recall)" in shown
    system = system_text(main_calls(api_env)[-1])
    assert any("we ship on thursdays" in line for line in prompt_index_lines(system, "team"))


def test_team_memories_ask_nothing_with_memory_off(cli: Cli, team_repo: Path) -> None:
    cli.env["MINI_CLAUDE_MEMORY"] = "off"
    with cli.terminal(columns=140) as term:
        shown = term.expect(r"/help for commands")
        term.expect_prompt()
    assert "Trust it?" not in shown


def test_print_mode_loads_team_memories_only_in_a_trusted_folder(
    cli: Cli, api_env: FakeAnthropic, team_repo: Path
) -> None:
    api_env.stream_replies.extend([text_reply("ok"), text_reply("ok")])

    untrusted = cli.run("-p", "hi")
    trusted = cli.run("--trust-folder", "-p", "hi")

    assert untrusted.returncode == trusted.returncode == 0, untrusted.stderr + trusted.stderr
    first, second = (system_text(request) for request in main_calls(api_env))
    assert "we ship on thursdays" not in first
    assert "1 team memories in" in untrusted.stderr and "this folder is not trusted" in untrusted.stderr
    assert "--trust-folder trusts it for one run" in untrusted.stderr
    assert any("we ship on thursdays" in line for line in prompt_index_lines(second, "team"))
