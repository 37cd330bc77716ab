"""Settings files in Claude Code's format, as a user moving over has them: `~/.claude/settings.json`
and ours, the project's and the local ones, `--settings`, flags over all; each value with where
it came from. What reaches the model server (model, max_tokens, the system prompt) shows the
settings were used."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mini_claude.app.settings.configure import Flags, configure
from mini_claude.app.settings.trust import TrustStore
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import main_calls, system_text


def write_json(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


def git_repo(folder: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def answered(cli: Cli, api_env: FakeAnthropic, *args: str) -> subprocess.CompletedProcess[str]:
    api_env.stream_replies.append(text_reply("ok"))
    result = cli.run(*args, "-p", "hi")
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture
def home(isolated_env: Path) -> Path:
    return isolated_env


def test_each_level_wins_over_the_one_before_and_flags_win_over_all(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, home: Path
) -> None:
    write_json(home / ".claude/settings.json", {"model": "user-claude-model"})
    answered(cli, api_env)
    write_json(home / ".mini-claude/settings.json", {"model": "user-own-model"})
    answered(cli, api_env)
    write_json(project_dir / ".claude/settings.json", {"model": "project-model"})
    answered(cli, api_env)
    write_json(project_dir / ".mini-claude/settings.local.json", {"model": "local-model"})
    answered(cli, api_env)
    cli.env["ANTHROPIC_MODEL"] = "env-model"
    answered(cli, api_env)
    answered(cli, api_env, "--model", "flag-model")

    models = [request.model for request in main_calls(api_env)]
    assert models == [
        "user-claude-model", "user-own-model", "project-model", "local-model", "env-model", "flag-model",
    ]  # fmt: skip


def test_a_subfolder_uses_the_settings_at_the_top_of_its_work_tree(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    git_repo(project_dir)
    write_json(project_dir / ".claude/settings.json", {"model": "root-model"})
    (project_dir / "src/deep").mkdir(parents=True)
    answered(Cli(project_dir / "src/deep"), api_env)
    assert main_calls(api_env)[0].model == "root-model"


def test_env_from_the_users_settings_reaches_the_program_and_its_commands(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, home: Path
) -> None:
    write_json(home / ".claude/settings.json", {"env": {"MINI_CLAUDE_MAX_TOKENS": 1234, "GREETING": "hello"}})
    api_env.stream_replies.extend(
        [tool_reply("run_shell", {"command": "echo $GREETING > said.txt"}), text_reply("done")]
    )
    result = cli.run("--dangerously-skip-permissions", "-p", "run it")

    assert result.returncode == 0, result.stderr
    assert main_calls(api_env)[0].body["max_tokens"] == 1234
    assert (project_dir / "said.txt").read_text() == "hello\n"


def test_our_own_settings_turn_memory_off_and_set_the_window(
    cli: Cli, api_env: FakeAnthropic, home: Path
) -> None:
    write_json(home / ".mini-claude/settings.json", {"autoMemoryEnabled": False, "earlyRecall": False})
    answered(cli, api_env)
    system = system_text(main_calls(api_env)[0])
    assert "Automatic memory is off for this session" in system
    assert "<memory-index>" not in system and "No memories saved yet" not in system


def test_unknown_keys_and_wrong_values_are_named_in_one_line_each(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    write_json(
        project_dir / ".claude/settings.json",
        {
            "statusLine": {"type": "command"},
            "theme": "dark",
            "model": 42,
            "contextWindow": 10,
            "$schema": "x",
        },
    )
    result = answered(cli, api_env)

    lines = result.stderr.splitlines()
    assert ".claude/settings.json: ignored (mini-claude does not use them): statusLine, theme" in lines
    assert ".claude/settings.json: model must be a model name (text without spaces): ignored" in lines
    assert any(
        line.startswith(".claude/settings.json: contextWindow must be a whole number") for line in lines
    )
    assert "$schema" not in result.stderr
    assert main_calls(api_env)[0].model == "claude-sonnet-5-5"


def test_invalid_json_names_file_line_and_column_and_the_rest_still_count(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, home: Path
) -> None:
    write_json(home / ".claude/settings.json", {"model": "user-model"})
    (project_dir / ".claude").mkdir()
    (project_dir / ".claude/settings.json").write_text('{\n  "model": "project-model",\n  "env": {\n}\n')

    result = answered(cli, api_env)

    expected = ".claude/settings.json: invalid JSON at line 5, column 1 (Expecting ',' delimiter): skipped"
    assert expected in result.stderr.splitlines(), result.stderr
    assert main_calls(api_env)[0].model == "user-model"


def test_settings_flag_takes_a_file_or_json_and_wins_over_the_files(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, tmp_path: Path
) -> None:
    write_json(project_dir / ".claude/settings.local.json", {"model": "local-model"})
    extra = write_json(tmp_path / "ci-settings.json", {"model": "file-flag-model"})
    answered(cli, api_env, "--settings", str(extra))
    answered(cli, api_env, "--settings", '{"model": "json-flag-model"}')
    assert [r.model for r in main_calls(api_env)] == ["file-flag-model", "json-flag-model"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("missing.json", "mini-claude: error: --settings missing.json: no such file"),
        ('{"model": }', "mini-claude: error: --settings: invalid JSON at line 1, column 11"),
    ],
    ids=["missing-file", "bad-json"],
)
def test_an_unusable_settings_flag_stops_before_any_request(
    cli: Cli, api_env: FakeAnthropic, value: str, expected: str
) -> None:
    result = cli.run("--settings", value, "-p", "hi")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].startswith(expected), result.stderr
    assert api_env.requests == []


def test_default_mode_from_the_users_settings_lets_edits_through(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, home: Path
) -> None:
    write_json(home / ".claude/settings.json", {"permissions": {"defaultMode": "acceptEdits"}})
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": "made.txt", "content": "x"}), text_reply("done")]
    )
    assert cli.run("-p", "write it").returncode == 0
    assert (project_dir / "made.txt").read_text() == "x"


def test_plan_mode_from_the_users_settings_changes_nothing_and_a_mode_we_lack_is_said(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, home: Path
) -> None:
    write_json(home / ".claude/settings.json", {"permissions": {"defaultMode": "plan"}})
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": "made.txt", "content": "x"}), text_reply("planned")]
    )
    assert cli.run("-p", "write it").returncode == 0
    assert not (project_dir / "made.txt").exists() and "plan mode" in str(main_calls(api_env)[1].messages[-1])
    write_json(home / ".claude/settings.json", {"permissions": {"defaultMode": "dontAsk"}})
    result = answered(cli, api_env)
    assert "~/.claude/settings.json: permissions.defaultMode 'dontAsk' is not a mode this version has" in (
        result.stderr
    )


def test_additional_directories_and_add_dir_are_read_as_the_project(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, home: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    (shared / "docs").mkdir(parents=True)
    (shared / "docs/api.md").write_text("the shared api\n")
    write_json(
        home / ".claude/settings.json", {"permissions": {"additionalDirectories": [str(shared / "docs")]}}
    )
    api_env.stream_replies.extend(
        [tool_reply("read_file", {"file_path": str(shared / "docs/api.md")}), text_reply("read it")]
    )
    result = cli.run("-p", "read the shared doc")  # print mode cannot ask: a read outside would fail

    assert result.returncode == 0, result.stderr
    assert "the shared api" in str(main_calls(api_env)[1].messages[-1])
    assert f'"{shared / "docs"}"' in system_text(main_calls(api_env)[0])

    (shared / "other.md").write_text("other\n")
    api_env.stream_replies.extend(
        [tool_reply("read_file", {"file_path": str(shared / "other.md")}), text_reply("read it")]
    )
    assert cli.run("--add-dir", str(shared), "-p", "read").returncode == 0
    assert "other" in str(main_calls(api_env)[3].messages[-1])


def test_add_dir_naming_no_folder_is_a_usage_error(cli: Cli, api_env: FakeAnthropic) -> None:
    result = cli.run("--add-dir", "no/such/folder", "-p", "hi")
    assert result.returncode == 2 and "--add-dir: " in result.stderr and "is not a folder" in result.stderr


def test_rules_are_kept_with_their_file(
    project_dir: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_json(
        home / ".claude/settings.json",
        {"permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]}},
    )
    write_json(project_dir / ".claude/settings.json", {"permissions": {"ask": ["Bash(git push:*)"]}})
    monkeypatch.setattr(os, "environ", dict(os.environ))  # configure applies `env` to this process

    settings = configure(Flags(), trust=TrustStore(home / "trust"))

    rules = [(rule.kind, rule.rule, rule.source, rule.scope) for rule in settings.permission_rules]
    assert rules == [
        ("allow", "Bash(npm test:*)", "~/.claude/settings.json", "user"),
        ("deny", "Read(./.env)", "~/.claude/settings.json", "user"),
        ("ask", "Bash(git push:*)", ".claude/settings.json", "project"),
    ]
    assert not any("permission rule" in note for note in settings.notes)  # applied: nothing to say
    assert settings.origins["model"] == "default"


def test_our_own_keys_and_claude_codes_cleanup_reach_the_settings(
    project_dir: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = {"contextWindow": 64000, "earlyRecall": False, "autoMemoryEnabled": False, "cleanupPeriodDays": 0}
    write_json(home / ".claude/settings.json", user)
    write_json(project_dir / ".claude/settings.json", {"cleanupPeriodDays": 1, "contextWindow": 90000})
    monkeypatch.setattr(os, "environ", dict(os.environ))

    settings = configure(Flags(), trust=TrustStore(home / "trust"))

    assert settings.context_window == 90_000 and settings.origins["context_window"] == ".claude/settings.json"
    assert settings.early_recall is False and settings.memory_enabled is False
    # A project may not shorten how long your sessions are kept unless you trust it.
    assert settings.session_retention_days == 0
    assert settings.origins["session_retention_days"] == "~/.claude/settings.json"
    assert any(
        note.startswith("Ignored .claude/settings.json (cleanupPeriodDays)") for note in settings.notes
    )


@pytest.mark.parametrize(
    ("variable", "expected"), [(None, "off"), ("ask", "ask"), ("on", "on"), ("off", "off")]
)
def test_one_memory_mode_the_environment_over_auto_memory_enabled(
    project_dir: Path, home: Path, monkeypatch: pytest.MonkeyPatch, variable: str | None, expected: str
) -> None:
    write_json(home / ".claude/settings.json", {"autoMemoryEnabled": False})
    monkeypatch.setattr(os, "environ", dict(os.environ))
    if variable is not None:
        monkeypatch.setenv("MINI_CLAUDE_MEMORY", variable)

    settings = configure(Flags(), trust=TrustStore(home / "trust"))

    assert settings.memory_mode == expected and settings.memory_enabled is (expected != "off")
    origin = "MINI_CLAUDE_MEMORY" if variable else "~/.claude/settings.json"
    assert settings.origins["memory_enabled"] == origin


def test_memory_turned_off_by_a_settings_file_says_which(
    cli: Cli, api_env: FakeAnthropic, home: Path, project_dir: Path
) -> None:
    write_json(home / ".claude/settings.json", {"autoMemoryEnabled": False})
    with cli.terminal(columns=160) as term:
        term.wait_until_ready()
        term.submit("/memory")
        shown = term.expect(r"the model saves nothing\.")
        term.submit("/status")
        status = term.expect(r"Session retention: ")
    assert "Automatic memory is off (autoMemoryEnabled: false in ~/.claude/settings.json)" in shown
    assert "Memory: off  (~/.claude/settings.json)" in status
    assert api_env.requests == []
