"""Permission rules end to end, against the fake server: --allowedTools and --disallowedTools, the
settings files' rules (read by the settings loader, a project's allow rules only in a trusted
folder), the project's .mini-claude/settings.local.json (written by "always" and /permissions,
keeping what else it holds), /permissions, grants that end with the conversation, defaultMode,
and print mode in plan mode."""

from __future__ import annotations

import io
import json
import re
import subprocess
import threading
from pathlib import Path

import pytest
from rich.console import Console

from mini_claude.app.settings.local_rules import LocalRules, SettingsFileError
from mini_claude.core.events import Notice
from mini_claude.ui.commands import permissions, status  # noqa: F401 - registers /permissions, /status
from mini_claude.ui.commands.registry import CommandContext, dispatch
from mini_claude.ui.render.renderer import Renderer
from tests.agent_harness import Harness
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import tool_results_in

LOCAL = Path(".mini-claude") / "settings.local.json"


def command(harness: Harness, line: str) -> str:
    output = io.StringIO()
    console = Console(file=output, width=120)
    ctx = CommandContext(console, harness.session, Renderer(console), lambda q: True)
    dispatch(line, ctx)
    return output.getvalue()


def write_settings(project: Path, value: object) -> Path:
    path = project / LOCAL
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(value) if not isinstance(value, str) else value)
    return path


def run_command(api_env: FakeAnthropic, cmd: str) -> None:
    api_env.stream_replies.extend([tool_reply("run_shell", {"command": cmd}), text_reply("Finished.")])


# --- flags ----------------------------------------------------------------------------------------------


def test_allowed_tools_let_print_mode_run_a_command(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    run_command(api_env, "touch made && mkdir dir")
    done = cli.run("-p", "go", "--allowedTools", "Bash(touch:*),Bash(mkdir:*)")
    assert done.returncode == 0 and (project_dir / "made").exists() and (project_dir / "dir").is_dir()


def test_allowed_tools_take_space_separated_and_repeated_values(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    run_command(api_env, "touch made && git init -q")
    done = cli.run("-p", "go", "--allowedTools", "Bash(touch:*) Read", "--allowed-tools", "Bash(git init:*)")
    assert done.returncode == 0 and (project_dir / "made").exists() and (project_dir / ".git").is_dir()


def test_disallowed_tools_refuse_even_in_bypass_and_tell_the_model_why(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    run_command(api_env, "ls && touch made")
    done = cli.run("-p", "go", "--dangerously-skip-permissions", "--disallowedTools", "Bash(touch:*)")
    assert done.returncode == 0 and not (project_dir / "made").exists()
    [result] = tool_results_in(api_env.requests[1])
    assert "refused by the user's settings (deny rule Bash(touch:*) in --disallowedTools)" in json.dumps(
        result
    )


def test_a_flag_rule_that_does_not_parse_is_a_usage_error(cli: Cli) -> None:
    done = cli.run("-p", "go", "--allowedTools", "Bash(npm test")
    assert done.returncode == 2 and "--allowedTools: allow rule 'Bash(npm test' is not valid" in done.stderr


# --- the local settings file ------------------------------------------------------------------------


def test_rules_in_the_local_settings_file_apply_in_a_trusted_folder(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    write_settings(project_dir, {"permissions": {"allow": ["Bash(touch:*)"], "deny": ["Edit(./locked/**)"]}})
    run_command(api_env, "touch made")
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": "locked/a", "content": "x"}), text_reply("No.")]
    )
    done = cli.run("-p", "go", "--permission-mode", "accept-edits", "--trust-folder")
    assert (project_dir / "made").exists()
    done = cli.run("-p", "again", "--permission-mode", "accept-edits", "--trust-folder")
    assert done.returncode == 0 and not (project_dir / "locked").exists()


def test_invalid_json_is_one_warning_naming_the_place_and_the_file_is_kept(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    path = write_settings(project_dir, '{"permissions": {"allow": ["Bash(touch:*)",]}}')
    before = path.read_bytes()
    run_command(api_env, "touch made")
    done = cli.run("-p", "go", "--trust-folder")
    assert not (project_dir / "made").exists()
    assert ".mini-claude/settings.local.json: invalid JSON at line 1, column 44" in done.stderr
    assert path.read_bytes() == before


def test_a_rule_that_does_not_parse_is_skipped_with_one_line(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    write_settings(project_dir, {"permissions": {"allow": ["Bash(touch:*)", "Bsh(ls)"]}})
    run_command(api_env, "touch made")
    done = cli.run("-p", "go", "--trust-folder")
    assert (project_dir / "made").exists()
    assert (
        ".mini-claude/settings.local.json: allow rule 'Bsh(ls)' is not valid: no tool is called Bsh"
        in done.stderr
    )


def test_default_mode_starts_the_session_in_it(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    write_settings(project_dir, {"permissions": {"defaultMode": "acceptEdits"}})
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": "a.txt", "content": "a"}), text_reply("Ok.")]
    )
    assert cli.run("-p", "go", "--trust-folder").returncode == 0 and (project_dir / "a.txt").exists()
    write_settings(project_dir, {"permissions": {"defaultMode": "plan"}})  # plan needs no trust
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": "b.txt", "content": "b"}), text_reply("Ok.")]
    )
    assert cli.run("-p", "go").returncode == 0 and not (project_dir / "b.txt").exists()
    assert "plan mode" in json.dumps(tool_results_in(api_env.requests[-1]))


def test_two_sessions_saving_at_once_keep_both_rules_and_every_other_key(project_dir: Path) -> None:
    write_settings(project_dir, {"model": "keep-me", "permissions": {"ask": ["Bash(git push:*)"]}})
    texts = [f"Bash(tool{n}:*)" for n in range(20)]
    threads = [threading.Thread(target=LocalRules(project_dir).add_rule, args=(t, "allow")) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    saved = json.loads((project_dir / LOCAL).read_text())
    assert sorted(saved["permissions"]["allow"]) == sorted(texts)
    assert saved["model"] == "keep-me" and saved["permissions"]["ask"] == ["Bash(git push:*)"]


def test_a_change_to_an_invalid_file_is_refused_and_the_file_kept(project_dir: Path) -> None:
    path = write_settings(project_dir, "{not json")
    with pytest.raises(SettingsFileError, match=r"invalid JSON at line 1, column 2"):
        LocalRules(project_dir).add_rule("Bash(ls)", "allow")
    assert path.read_text() == "{not json"


def test_a_new_settings_file_is_private(project_dir: Path) -> None:
    LocalRules(project_dir).add_rule("Bash(ls)", "allow")
    assert (project_dir / LOCAL).stat().st_mode & 0o777 == 0o600
    assert (project_dir / LOCAL).parent.stat().st_mode & 0o777 == 0o700


# --- answers and /permissions ------------------------------------------------------------------------


def test_always_for_a_command_is_saved_for_the_next_session(
    api_env: FakeAnthropic, project_dir: Path, cli: Cli
) -> None:
    harness = Harness(answers=["a"]).start(folder_trusted=True)
    run_command(api_env, "touch one")
    harness.turn("go")
    assert json.loads((project_dir / LOCAL).read_text()) == {"permissions": {"allow": ["Bash(touch:*)"]}}
    assert harness.questions[0].always == "allow Bash(touch:*) in this project"
    assert not harness.of_type(Notice)  # no repository here, so nothing to keep out of git
    run_command(api_env, "touch two")
    done = cli.run("-p", "go", "--trust-folder")
    assert done.returncode == 0 and (project_dir / "two").exists()  # a new session, no one asked


def test_always_in_an_untrusted_repository_says_what_later_sessions_need(
    api_env: FakeAnthropic, project_dir: Path, cli: Cli
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project_dir, check=True)
    harness = Harness(answers=["a", "a"]).start()
    run_command(api_env, "touch one && touch two")
    harness.turn("go")
    assert (project_dir / "two").exists() and len(harness.questions) == 1  # in effect at once
    said = [notice.text for notice in harness.of_type(Notice)]
    assert (
        ".mini-claude/settings.local.json: its allow rules apply in later sessions only once you trust"
        in said[0]
    )
    assert said[1] == ".mini-claude/settings.local.json holds your own permission rules: add it to .gitignore"
    run_command(api_env, "touch three")
    done = cli.run("-p", "go")  # print mode in a folder never trusted: the rule is left out
    assert not (project_dir / "three").exists() and "Ignored .mini-claude/settings.local.json" in done.stderr


def test_session_grants_end_with_the_conversation(
    api_env: FakeAnthropic, project_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("x")
    harness = Harness(answers=["a", "a", "n", "n"]).start()
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": "a.txt", "content": "a"}),
            tool_reply("read_file", {"file_path": str(outside / "x.txt")}),
            text_reply("Ok."),
        ]
    )
    harness.turn("go")
    assert harness.session.permissions.mode == "accept-edits" and len(harness.questions) == 2
    command(harness, "/clear")
    assert harness.session.permissions.mode == "ask"
    api_env.stream_replies.extend([tool_reply("read_file", {"file_path": str(outside / "x.txt")})])
    harness.turn("again")
    assert len(harness.questions) == 3  # the folder grant went with the conversation


def test_slash_permissions_lists_adds_and_removes(api_env: FakeAnthropic, project_dir: Path) -> None:
    write_settings(project_dir, {"theme": "dark", "permissions": {"deny": ["Bash(rm:*)"]}})
    harness = Harness().start(files=True, allowed_tools=("Read",))
    listed = command(harness, "/permissions")
    assert "deny:" in listed and "Bash(rm:*)" in listed and ".mini-claude/settings.local.json" in listed
    assert "allow:" in listed and "--allowedTools" in listed and "Mode: ask (default)" in listed

    added = command(harness, "/permissions allow Bash(npm test:*)")
    assert "Added allow rule Bash(npm test:*)" in added
    assert any(r.text == "Bash(npm test:*)" for r in harness.session.permissions.rules.rules)
    assert "already" in command(harness, "/permissions allow Bash(npm test:*)")
    assert "Bsh" in command(harness, "/permissions deny Bsh(x)") and "not valid" in command(
        harness, "/permissions deny Bsh(x)"
    )
    removed = command(harness, "/permissions rm Bash(rm:*)")
    assert "Removed Bash(rm:*) (deny)" in removed
    assert not any(r.text == "Bash(rm:*)" for r in harness.session.permissions.rules.rules)
    assert "comes from --allowedTools" in command(harness, "/permissions rm Read")
    saved = json.loads((project_dir / LOCAL).read_text())
    assert saved == {"theme": "dark", "permissions": {"deny": [], "allow": ["Bash(npm test:*)"]}}


def test_status_and_permissions_name_the_same_sources(api_env: FakeAnthropic, project_dir: Path) -> None:
    claude = project_dir / ".claude" / "settings.json"
    claude.parent.mkdir()
    claude.write_text(json.dumps({"permissions": {"deny": ["Read(./.env)"], "ask": ["Bash(git push:*)"]}}))
    write_settings(project_dir, {"permissions": {"allow": ["Bash(make:*)"]}})
    harness = Harness().start(files=True, disallowed_tools=("Bash(curl:*)",))
    shown = command(harness, "/status")
    assert "Permission rules (3; /permissions lists them):" in shown
    assert "  .claude/settings.json  (1 ask, 1 deny)" in shown and "  --disallowedTools  (1 deny)" in shown
    assert ".mini-claude/settings.local.json  (local: used, but not its allow rules" in shown  # needs trust
    listed = command(harness, "/permissions")
    assert re.search(r"Read\(\./\.env\) +\.claude/settings\.json", listed)
    assert re.search(r"Bash\(curl:\*\) +--disallowedTools", listed)
    assert (
        ".mini-claude/settings.local.json: used, but not its allow rules (the folder is not trusted)"
        in listed
    )


def test_the_first_rule_saved_offers_to_keep_the_file_out_of_git(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project_dir, check=True)
    harness = Harness().start(files=True)
    said = command(harness, "/permissions deny Bash(curl:*)")
    assert "Added .mini-claude/settings.local.json to .gitignore." in said
    assert (project_dir / ".gitignore").read_text() == ".mini-claude/settings.local.json\n"
    ignored = subprocess.run(["git", "check-ignore", "-q", str(LOCAL)], cwd=project_dir, check=False)
    assert ignored.returncode == 0
    assert ".gitignore" not in command(harness, "/permissions deny Bash(wget:*)")  # asked once


# --- plan mode in print mode -----------------------------------------------------------------------


def test_print_mode_in_plan_mode_prints_the_plan_and_changes_nothing(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    plan = "# Plan\n\n1. Add tests\n2. Fix the bug"
    api_env.stream_replies.extend(
        [
            tool_reply("run_shell", {"command": "touch made"}),
            tool_reply("read_file", {"file_path": "missing.txt"}),
            tool_reply("exit_plan_mode", {"plan": plan}),
            text_reply("never asked for"),
        ]
    )
    done = cli.run("-p", "plan the fix", "--permission-mode", "plan")
    assert done.returncode == 0 and done.stdout == plan + "\n"
    assert not (project_dir / "made").exists()
    refused = tool_results_in(api_env.requests[1])[0]
    assert "plan mode" in json.dumps(refused)
    assert len(api_env.requests) == 3
    first = api_env.requests[0].messages[0]["content"][0]["text"]
    assert first.startswith("<system-reminder>\nPlan mode is on")


def test_exit_plan_mode_outside_plan_mode_is_an_error_for_the_model(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([tool_reply("exit_plan_mode", {"plan": "x"}), text_reply("Going ahead.")])
    done = cli.run("-p", "do it")
    assert done.returncode == 0 and done.stdout == "Going ahead.\n"
    assert "only for plan mode" in json.dumps(tool_results_in(api_env.requests[1]))


def test_added_folders_are_the_projects_for_every_check(
    api_env: FakeAnthropic, project_dir: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("shared notes\n")
    harness = Harness().start(permission_mode="accept-edits", additional_dirs=(shared,))
    api_env.stream_replies.extend(
        [
            tool_reply("run_shell", {"command": f"cat {shared / 'notes.txt'}"}),  # read-only: its path is in
            tool_reply("write_file", {"file_path": str(shared / "new.txt"), "content": "x"}),
            text_reply("Done."),
        ]
    )
    harness.turn("go")
    assert harness.questions == [] and (shared / "new.txt").read_text() == "x"
    assert "shared notes" in json.dumps(tool_results_in(api_env.requests[1]))
