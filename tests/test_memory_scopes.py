"""Memory scopes: the user's own memories (every project), this project's, and the team's in the
repository; one list with a scope on each memory; the narrower wins a name clash; memories moved
between scopes from the REPL and the shell, and moved back by undo."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir, user_memory_dir
from mini_claude.core.events import MemoriesRecalled, Notice
from mini_claude.memory.store.memory_folder import GITIGNORE_FILE
from tests.agent_harness import Harness, hold_replies_until_recall_settles
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import (
    choose,
    main_calls,
    memory_text,
    prompt_index_lines,
    reminders_in,
    result_text,
    seed_memories,
    side_queries,
    side_query_message,
    system_text,
    tool_results_in,
)
from tests.test_memory_agent import memory_command

PYTEST = memory_text("prefers pytest", "the user prefers pytest over unittest, in every project", "feedback")
LONG_AGO = 1_600_000_000


def test_a_user_memory_saved_in_one_project_is_recalled_in_another(
    api_env: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    saver = Harness().start()
    target = user_memory_dir() / "feedback_prefers_pytest.md"
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": str(target), "content": PYTEST}), text_reply("Noted.")]
    )
    assert saver.turn("I always prefer pytest, in every project").reason == "done"
    assert saver.questions == [] and "\nsource: model\n" in target.read_text()
    assert not project_memory_dir(str(first)).exists()  # not this project's

    monkeypatch.chdir(second)
    other = Harness().start()
    api_env.plain_replies.append(choose("user/feedback_prefers_pytest.md"))
    api_env.responder = hold_replies_until_recall_settles
    api_env.stream_replies.extend([tool_reply("list_files", {}), text_reply("With pytest, then.")])
    assert other.turn("write tests for the parser").reason == "done"

    first_call, second_call = main_calls(api_env)[-2:]
    assert any("prefers pytest" in line for line in prompt_index_lines(system_text(first_call), "user"))
    assert "[feedback] user/feedback_prefers_pytest.md (today)" in side_query_message(
        side_queries(api_env)[-1]
    )
    [reminder] = reminders_in(second_call)
    assert "pytest over unittest" in reminder
    assert f"Memory file (the user's own, for every project): {target}" in reminder
    assert other.of_type(MemoriesRecalled) == [MemoriesRecalled(("user/feedback_prefers_pytest.md",))]
    assert "[feedback · yours] prefers pytest" in memory_command(other, "/memory")


def test_the_narrower_scope_wins_a_name_clash_and_memory_says_so(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    seed_memories(user_memory_dir(), {"user_role.md": memory_text("role", "backend engineer, Go", "user")})
    seed_memories(
        harness.session.store.root, {"user_role.md": memory_text("role", "the frontend here", "user")}
    )
    api_env.plain_replies.append(choose())
    api_env.stream_replies.append(text_reply("Hi."))

    harness.turn("hello, what do you know about me?")
    api_env.wait_for_requests(2)  # the recall's side query may come after the reply

    system = system_text(main_calls(api_env)[0])
    assert any("the frontend here" in line for line in prompt_index_lines(system))
    assert "backend engineer" not in system
    manifest = side_query_message(side_queries(api_env)[0])
    assert "user_role.md" in manifest and "user/user_role.md" not in manifest
    listing = memory_command(harness, "/memory")
    [hidden] = [line for line in listing.splitlines() if "backend engineer" in line]
    assert (
        hidden.startswith("[user · yours] role")
        and "hidden by the one of this name in this project's" in hidden
    )


def seeded_project_memory(project_dir: Path) -> Path:
    folder = project_memory_dir(str(project_dir))
    seed_memories(folder, {"feedback_pytest.md": PYTEST})
    os.utime(folder / "feedback_pytest.md", (LONG_AGO, LONG_AGO))
    return folder / "feedback_pytest.md"


def test_promote_and_demote_from_the_shell_move_the_file_whole_and_undo_moves_it_back(
    project_dir: Path,
) -> None:
    cli, project_file = Cli(project_dir), seeded_project_memory(project_dir)
    user_file = user_memory_dir() / "feedback_pytest.md"

    promoted = cli.run("memory", "promote", "prefers pytest")

    assert promoted.returncode == 0, promoted.stderr
    assert promoted.stdout.startswith("Moved 'prefers pytest' to your memories (every project): ")
    assert not project_file.exists() and user_file.read_text() == PYTEST
    assert os.stat(user_file).st_mtime == LONG_AGO  # as old as its facts
    assert "[feedback · yours] prefers pytest" in cli.run("memory", "list").stdout
    undone = cli.run("memory", "undo")
    assert undone.returncode == 0, undone.stderr
    assert "The promotion of feedback_pytest.md to your memories (every project) was undone" in undone.stdout
    assert project_file.read_text() == PYTEST and not user_file.exists()

    assert cli.run("memory", "promote", "feedback_pytest.md").returncode == 0
    demoted = cli.run("memory", "demote", "prefers pytest")
    assert demoted.returncode == 0, demoted.stderr
    assert project_file.read_text() == PYTEST and not user_file.exists()
    again = cli.run("memory", "demote", "prefers pytest")
    assert (
        again.returncode == 1
        and "it cannot be demoted (/memory promote moves it the other way)" in again.stderr
    )


def test_a_move_onto_a_name_the_other_scope_holds_is_refused(project_dir: Path) -> None:
    seeded_project_memory(project_dir)
    seed_memories(user_memory_dir(), {"feedback_other.md": memory_text("prefers pytest", "older wording")})

    refused = Cli(project_dir).run("memory", "promote", "feedback_pytest.md")

    assert refused.returncode == 1
    assert (
        "your memories (every project) has a memory named 'prefers pytest' already (feedback_other.md)"
        in (refused.stderr)
    )
    assert (project_memory_dir(str(project_dir)) / "feedback_pytest.md").exists()


def test_promote_in_the_repl_and_the_listing_marks_yours(project_dir: Path) -> None:
    seeded_project_memory(project_dir)
    with Cli(project_dir).terminal(columns=160) as term:
        term.wait_until_ready()
        term.submit("/memory promote prefers pytest")
        term.expect(r"Moved 'prefers pytest' to your memories \(every project\)")
        term.submit("/memory")
        term.expect(r"\[feedback · yours\] prefers pytest")
        term.submit("/memory show prefers pytest")
        term.expect(r"In your memories \(every project\): ")
        term.submit("/exit")
        assert term.wait_exit() == 0


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}  # fmt: skip
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


@pytest.fixture
def repo(project_dir: Path) -> Path:
    git(project_dir, "init", "-q")
    (project_dir / "README.md").write_text("an app\n")
    git(project_dir, "add", "README.md")
    git(project_dir, "commit", "-qm", "first")
    return project_dir


def test_share_moves_a_memory_into_the_repository_and_keeps_what_is_derived_out_of_git(repo: Path) -> None:
    seeded_project_memory(repo)
    team = repo / ".mini-claude" / "memory"

    shared = Cli(repo).run("memory", "share", "prefers pytest")

    assert shared.returncode == 0, shared.stderr
    assert "commit it (git add .mini-claude/memory) to share it" in shared.stdout
    assert "this one is not, so it is not used here" in shared.stdout  # not trusted: not loaded here
    assert (team / "feedback_pytest.md").read_text() == PYTEST and (team / GITIGNORE_FILE).exists()
    listed = Cli(repo).run("memory", "list")
    assert "1 team memories in the repository are not loaded: this folder is not trusted" in listed.stdout
    untracked = git(repo, "status", "--porcelain", "--untracked-files=all").split()
    assert sorted(p for p in untracked if p != "??") == [
        ".mini-claude/memory/.gitignore",
        ".mini-claude/memory/feedback_pytest.md",
    ]
    assert Cli(repo).run("memory", "undo").returncode == 0
    assert not (team / "feedback_pytest.md").exists()


def test_share_refuses_a_memory_that_holds_a_secret(repo: Path) -> None:
    folder = project_memory_dir(str(repo))
    key = "sk-ant-api03-" + "x7Fq2" * 18 + "AA"
    seed_memories(
        folder, {"reference_keys.md": memory_text("keys", "where the key is", body=f"Key: {key}\n")}
    )

    refused = Cli(repo).run("memory", "share", "keys")

    assert refused.returncode == 1 and "not shared: it looks like it holds" in refused.stderr
    assert (folder / "reference_keys.md").exists() and not (repo / ".mini-claude").exists()


def test_team_memories_load_only_in_a_trusted_folder(api_env: FakeAnthropic, repo: Path) -> None:
    seed_memories(
        repo / ".mini-claude" / "memory",
        {"project_deploys.md": memory_text("deploys", "we ship on thursdays")},
    )
    api_env.stream_replies.extend([text_reply("Hi."), text_reply("Hi again.")])

    untrusted = Harness().start()
    untrusted.turn("hello")
    trusted = Harness().start(folder_trusted=True)
    api_env.plain_replies.append(choose())
    trusted.turn("hello")

    first, second = main_calls(api_env)
    assert "we ship on thursdays" not in system_text(first)
    assert any(
        "team memories" in notice.text and "not trusted" in notice.text
        for notice in untrusted.of_type(Notice)
    )
    assert any("we ship on thursdays" in line for line in prompt_index_lines(system_text(second), "team"))


def test_a_model_write_into_the_team_folder_asks_even_in_bypass(api_env: FakeAnthropic, repo: Path) -> None:
    harness = Harness(answers=["n"]).start(permission_mode="bypass")
    target = repo / ".mini-claude" / "memory" / "project_deploys.md"
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": str(target), "content": memory_text("deploys")}),
            text_reply("Ok."),
        ]
    )

    harness.turn("remember the deploys for the team")

    [question] = harness.questions
    assert (
        question.reason.startswith("a team memory: committed to the repository") and not question.allow_always
    )
    [result] = tool_results_in(main_calls(api_env)[1])
    assert result.get("is_error") and "denied" in result_text(result)
    assert not target.exists()


def test_a_repository_in_the_home_folder_has_no_team_folder_beside_the_users(tmp_path: Path) -> None:
    home = Path.home()
    git(home, "init", "-q")
    seed_memories(user_memory_dir(), {"feedback_pytest.md": PYTEST})

    listed = Cli(home).run("memory", "list")

    assert listed.returncode == 0, listed.stderr
    assert "[feedback · yours] prefers pytest" in listed.stdout and "team" not in listed.stdout
