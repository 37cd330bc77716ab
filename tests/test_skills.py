"""Skills and custom commands as Claude Code users write them: real folders in the project and in
home, a real session against the fake server (and the real program for print mode)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mini_claude.app.invocation import invoked, prepare, run_prepared
from mini_claude.core.frontmatter.codec import parse
from mini_claude.extensions.skills.entries import tool_list
from tests.cli_harness import Cli
from tests.extensions_kit import command_file, configured_harness, skill
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import main_calls, result_text, system_text, tool_results_in, user_texts


def _run(harness, text: str):  # type: ignore[no-untyped-def]
    found = invoked(harness.session, text)
    assert found is not None, f"{text} runs nothing"
    prepared = prepare(harness.session, *found)
    assert not prepared.problems, prepared.problems
    return run_prepared(harness.session, prepared, harness.turn)


def test_the_system_prompt_names_skills_and_the_tool_loads_one_with_its_folder(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    path = skill(
        project_dir,
        "release-notes",
        "Writes release notes from the git log",
        "Read CHANGES.md, then write notes for $ARGUMENTS.",
    )
    (path.parent / "template.md").write_text("# Release {{version}}")
    skill(
        project_dir,
        "deploy",
        "Deploys to production",
        "Run the deploy.",
        **{"disable-model-invocation": "true"},
    )
    harness = configured_harness()
    api_env.stream_replies += [
        tool_reply("skill", {"name": "release-notes", "arguments": "v2.1"}),
        text_reply("notes"),
    ]

    harness.turn("write the release notes for v2.1")

    first = main_calls(api_env)[0]
    system = system_text(first)
    assert "release-notes: Writes release notes from the git log" in system
    assert "Read CHANGES.md" not in system  # only names and descriptions
    assert "deploy" not in system  # only the user may run it
    assert "skill" in [tool["name"] for tool in first.tools]
    loaded = result_text(tool_results_in(main_calls(api_env)[1])[0])
    assert "write notes for v2.1." in loaded and str(path.parent) in loaded and "template.md" in loaded
    assert '<skill name="release-notes">' in loaded


def test_a_skill_only_the_user_may_run_is_refused_to_the_model(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    skill(project_dir, "deploy", "Deploys", "Run ./deploy.sh", **{"disable-model-invocation": "true"})
    harness = configured_harness()
    assert "skill" not in [d["name"] for d in harness.session.agent.tools.definitions()]
    api_env.stream_replies += [tool_reply("skill", {"name": "deploy"}), text_reply("ok")]
    harness.turn("deploy")
    result = tool_results_in(main_calls(api_env)[-1])[0]
    assert result["is_error"] and "can only be run by the user" in result_text(result)


def test_the_skill_tool_obeys_rules_naming_it_and_loads_in_plan_mode(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    skill(project_dir, "notes", "Takes notes", "Write notes.")
    settings = project_dir / ".claude" / "settings.json"
    settings.write_text(json.dumps({"permissions": {"defaultMode": "plan"}}))
    api_env.stream_replies += [tool_reply("skill", {"name": "notes"}), text_reply("ok")]
    configured_harness().turn("take notes")  # plan mode: loading a skill changes nothing
    assert "Write notes." in result_text(tool_results_in(main_calls(api_env)[-1])[0])

    settings.write_text(json.dumps({"permissions": {"deny": ["Skill"]}}))
    api_env.stream_replies += [tool_reply("skill", {"name": "notes"}), text_reply("ok")]
    configured_harness().turn("take notes")
    refused = tool_results_in(main_calls(api_env)[-1])[0]
    assert refused["is_error"] and "deny rule Skill" in result_text(refused)
    assert "Write notes." not in result_text(refused)


def test_a_skill_added_or_edited_during_a_session_reaches_the_model_at_the_next_message(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    skill(project_dir, "lint", "Runs the linter", "ruff check .")
    harness = configured_harness()
    api_env.stream_replies += [text_reply("one"), text_reply("two"), text_reply("three")]
    harness.turn("hello")
    skill(project_dir, "bench", "Runs the benchmarks", "make bench")
    harness.turn("again")
    second = json.dumps(main_calls(api_env)[1].messages)
    assert "new: bench: Runs the benchmarks" in second
    assert system_text(main_calls(api_env)[1]) == system_text(main_calls(api_env)[0])  # the cache holds
    skill(project_dir, "lint", "Runs ruff and mypy", "ruff check . && mypy")
    harness.turn("and again")
    assert "changed: lint: Runs ruff and mypy" in json.dumps(main_calls(api_env)[2].messages[-1])


def test_a_custom_command_fills_arguments_runs_its_commands_and_attaches_files(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "api.py").write_text("def handler(): ...\n")
    command_file(
        project_dir, "review",
        "Changed files: !`echo api.py`\nReview @api.py for $1, then $2. Everything: $ARGUMENTS\n",
        description="Review a file", **{"argument-hint": "[focus] [then]", "allowed-tools": "Bash(echo:*)"},
    )  # fmt: skip
    harness = configured_harness()  # trusted: the command's allowed-tools hold, no question
    api_env.stream_replies.append(text_reply("reviewed"))

    ended = _run(harness, '/review "error handling" tests')

    assert ended.reason == "done"
    texts = user_texts(main_calls(api_env)[0])
    message = texts[-1]
    assert "Review @api.py for error handling, then tests." in message
    assert 'Everything: "error handling" tests' in message
    assert '<command-output command="echo api.py">\napi.py' in message
    assert any("def handler()" in text for text in texts[:-1])  # attached, as @ at the prompt
    assert not any(  # the command's allowed-tools ended with the turn
        rule.entry.source.startswith("/review") for rule in harness.session.permissions.rules.rules
    )


def test_a_command_in_an_untrusted_folder_asks_before_its_commands_run(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    command_file(project_dir, "status", "State: !`mkdir -p out`", **{"allowed-tools": "Bash"})
    harness = configured_harness(trusted=False, answers=["n"])
    found = invoked(harness.session, "/status")
    prepared = prepare(harness.session, *found)  # type: ignore[misc]
    assert harness.questions and harness.questions[0].target == "mkdir -p out"
    assert prepared.problems == ["!`mkdir -p out` was not run (permission denied), so /status was not sent"]
    assert not (project_dir / "out").exists()


def test_namespaces_descriptions_and_model(
    api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    command_file(project_dir, "frontend/component", "Create a React component named $1.\n")
    command_file(isolated_env, "fix", "Fix $ARGUMENTS", model="claude-haiku-9")
    command_file(project_dir, "fix", "The project's fix")
    harness = configured_harness()
    catalog = harness.session.extensions.catalog
    listing = catalog.refresh()
    by_name = {entry.name: entry for entry in listing.entries}
    assert by_name["frontend:component"].description == "Create a React component named $1."
    assert by_name["fix"].source == "~/.claude/commands/fix.md"  # the user's wins
    assert any(b.source == ".claude/commands/fix.md" and "which wins" in b.reason for b in listing.broken)
    assert catalog.find("component") is by_name["frontend:component"]  # its last part, when unique
    api_env.stream_replies.append(text_reply("fixed"))
    _run(harness, "/fix the flaky test")
    assert main_calls(api_env)[0].model == "claude-haiku-9"
    assert harness.session.agent.model != "claude-haiku-9"  # for that turn only


def test_ours_win_over_claude_codes_and_a_broken_one_says_why(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    skill(project_dir, "docs", "Claude Code's docs skill", "x")
    ours = project_dir / ".mini-claude" / "skills" / "docs"
    ours.mkdir(parents=True)
    (ours / "SKILL.md").write_text("---\ndescription: our docs skill\n---\ny")
    (project_dir / ".claude" / "skills" / "empty").mkdir()
    skill(project_dir, "nodesc", None, "body", model="inherit")
    listing = configured_harness().session.extensions.catalog.refresh()
    assert [(e.name, e.description) for e in listing.entries] == [("docs", "our docs skill")]
    reasons = {b.source: b.reason for b in listing.broken}
    assert reasons[".claude/skills/empty"] == "no SKILL.md in it"
    assert reasons[".claude/skills/nodesc/SKILL.md"].startswith("no description in its frontmatter")
    assert "which wins" in reasons[".claude/skills/docs/SKILL.md"]


def test_allowed_tools_that_are_no_rules_are_named_and_skipped(project_dir: Path) -> None:
    skill(project_dir, "lint", "Lints", "Run the linter.", **{"allowed-tools": "Bsh(ruff:*), Bash(ruff:*)"})
    harness = configured_harness()
    [entry] = harness.session.extensions.catalog.refresh().entries
    assert entry.allowed_tools == ("Bash(ruff:*)",)
    [note] = entry.notes
    assert note.startswith("allowed-tools: allow rule 'Bsh(ruff:*)' is not valid: no tool is called Bsh")
    assert note.endswith("(skipped)")


def test_allowed_tools_take_every_form_claude_code_files_use() -> None:
    forms = {
        "allowed-tools: Read, Grep, Bash(git diff:*)": ("Read", "Grep", "Bash(git diff:*)"),
        "allowed-tools: [Read, 'Bash(npm run a, b)']": ("Read", "Bash(npm run a, b)"),
        "allowed-tools: Read Bash(git status) Grep": ("Read", "Bash(git status)", "Grep"),
        "allowed-tools:\n  - Read\n  - Bash(git log:*)": ("Read", "Bash(git log:*)"),
    }
    for header, expected in forms.items():
        assert tool_list(parse(f"---\n{header}\n---\n"), "allowed-tools") == expected, header


def test_print_mode_runs_a_custom_command(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    command_file(project_dir, "explain", "Explain $ARGUMENTS in one line.", description="Explain something")
    api_env.stream_replies.append(text_reply("It is a thing."))
    done = cli.run("-p", "/explain the parser")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is a thing.\n"
    assert "Explain the parser in one line." in user_texts(main_calls(api_env)[0])[-1]


def test_a_project_skill_cannot_lead_outside_the_project(
    api_env: FakeAnthropic, project_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\ndescription: sneaky\n---\nread ~/.ssh")
    folder = project_dir / ".claude" / "skills"
    folder.mkdir(parents=True)
    os.symlink(outside, folder / "sneaky")
    listing = configured_harness().session.extensions.catalog.refresh()
    assert not listing.entries
    assert "outside" in listing.broken[0].reason
