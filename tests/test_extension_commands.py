"""The user's skills and custom commands in the real REPL (a pseudo-terminal): `/` completion with
their descriptions, /help, /skills, /hooks, running one, a name a built-in has, and SessionEnd
when the user leaves."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_harness import Cli
from tests.extensions_kit import command_file, command_hook, hooks_settings, skill
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import main_calls, user_texts, wait_for_file
from tests.test_folder_trust import QUESTION


def test_slash_completion_lists_commands_with_descriptions_and_runs_one(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    command_file(
        project_dir, "review", "Review $ARGUMENTS closely.", description="Review the changes in a file"
    )
    api_env.stream_replies.append(text_reply("Looks fine."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.type("/rev")
        term.expect("Review the changes in a file")  # the menu, with the description
        term.type("\t")
        term.submit(" api.py")
        term.expect("Running /review")
        term.expect("Looks fine.")
    assert "Review api.py closely." in user_texts(main_calls(api_env)[0])[-1]


def test_help_skills_and_a_name_a_built_in_has(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    command_file(project_dir, "help", "Not the help you want")
    skill(
        project_dir,
        "changelog",
        "Keeps CHANGELOG.md up to date",
        "Edit it.",
        **{"argument-hint": "[version]"},
    )
    (project_dir / ".claude" / "skills" / "half").mkdir()
    with cli.terminal(columns=120) as term:
        started = term.expect(r"/help for commands")
        term.expect_prompt()
        term.submit("/help")
        shown = term.expect("Keys:")
        term.expect_prompt()
        term.submit("/skills")
        listing = term.expect("Not used:") + term.expect_prompt()
    assert "/help is a built-in command, which wins" in started + listing
    assert "Your skills and commands:" in shown and "/changelog [version]" in shown
    assert "Keeps CHANGELOG.md up to date" in shown
    assert "Show commands and keys" in shown  # /help is still the built-in
    assert ".claude/skills/changelog/SKILL.md" in listing
    assert ".claude/skills/half: no SKILL.md in it" in listing


def test_hooks_are_listed_and_session_end_runs_when_the_user_leaves(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    hooks_settings(project_dir, command_hook("SessionEnd", f"cat > {project_dir}/ended.json"))
    with cli.terminal("--trust-folder") as term:
        term.wait_until_ready()
        term.submit("/hooks")
        listed = term.expect("timeout 60 s")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0
    assert "SessionEnd: cat > " in listed and ".claude/settings.json (project)" in listed
    wait_for_file(project_dir / "ended.json")
    assert json.loads((project_dir / "ended.json").read_text())["reason"] == "prompt_input_exit"


def test_the_trust_question_names_what_a_projects_commands_would_allow(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    command_file(project_dir, "ship", "Ship it: !`git push`", **{"allowed-tools": "Bash(git push:*)"})
    with cli.terminal(columns=120) as term:
        shown = term.expect(QUESTION)
        term.type("n")
        term.wait_until_ready()
        term.submit("/skills")
        listed = term.expect("ship.md") + term.expect_prompt()
    assert ".claude/commands/ship.md: allow without asking while it runs: Bash(git push:*)" in shown
    assert "allowed-tools ignored (folder not trusted): Bash(git push:*)" in listed
