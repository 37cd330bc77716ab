"""Which memory dir a session uses: one per git work tree, so every subfolder of a repository sees
the same memories; outside a work tree, one per working directory."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mini_claude.core import config
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply

ROLE_MEMORY = """---
name: user prefers small commits
description: one change per commit, each with a test
type: feedback
---
Keep commits small.
"""


@pytest.fixture
def outside_any_repo(tmp_path: Path) -> Path:
    if config.git_work_tree_root(tmp_path.resolve()) is not None:
        pytest.skip(f"the temp dir {tmp_path} lies inside a git work tree")
    return tmp_path.resolve()


@pytest.fixture
def repo(outside_any_repo: Path) -> Path:
    """A checkout as git leaves it: a `.git` folder at the top, source folders below."""
    repo = outside_any_repo / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    return repo


def hashed(folder: Path) -> Path:
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[: config.PROJECT_HASH_CHARS]
    return Path.home() / ".mini-claude" / "projects" / digest / "memory"


# --- finding the key ---------------------------------------------------------------------------


def test_a_subfolder_of_a_work_tree_shares_the_memory_dir_of_its_root(repo: Path) -> None:
    for folder in (repo, repo / "src", repo / "src" / "deep"):
        assert config.memory_project_root(folder) == repo
        assert config.project_memory_dir(str(folder)) == config.project_memory_dir(str(repo))
    # The key of the root itself is what it always was, so memories saved there before stay put.
    assert config.project_memory_dir(str(repo)) == hashed(repo)


def test_without_a_work_tree_the_working_directory_is_the_key(outside_any_repo: Path) -> None:
    plain = outside_any_repo / "plain" / "sub"
    plain.mkdir(parents=True)

    assert config.memory_project_root(plain) == plain
    assert config.project_memory_dir(str(plain)) == hashed(plain)
    assert config.project_memory_dir(str(plain)) != config.project_memory_dir(str(plain.parent))


def test_a_git_file_marks_the_root_of_a_linked_worktree_or_submodule(
    repo: Path, outside_any_repo: Path
) -> None:
    worktree = outside_any_repo / "repo-feature"
    (worktree / "src").mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {repo}/.git/worktrees/repo-feature\n")
    submodule = repo / "vendor" / "lib"
    (submodule / "include").mkdir(parents=True)
    (submodule / ".git").write_text("gitdir: ../../.git/modules/lib\n")

    assert config.memory_project_root(worktree / "src") == worktree
    assert config.memory_project_root(submodule / "include") == submodule  # the nearest root wins
    assert config.memory_project_root(repo / "vendor") == repo
    assert config.project_memory_dir(str(worktree / "src")) != config.project_memory_dir(str(repo))


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to make a real worktree")
def test_real_git_checkout_and_worktree(outside_any_repo: Path) -> None:
    main, linked = outside_any_repo / "main", outside_any_repo / "linked"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(main)]
    main.mkdir()
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    subprocess.run([*git, "worktree", "add", "-q", str(linked)], check=True)
    (main / "pkg").mkdir()
    (linked / "pkg").mkdir()

    assert config.memory_project_root(main / "pkg") == main
    assert config.memory_project_root(linked / "pkg") == linked


def test_symlinks_are_resolved_before_looking_for_the_root(repo: Path, outside_any_repo: Path) -> None:
    elsewhere = outside_any_repo / "elsewhere"
    elsewhere.mkdir()
    (outside_any_repo / "shortcut").symlink_to(repo / "src")
    (repo / "src" / "to-elsewhere").symlink_to(elsewhere)

    assert config.memory_project_root(outside_any_repo / "shortcut") == repo
    # A link inside the repository that leads out of it is judged by where it leads.
    assert config.memory_project_root(repo / "src" / "to-elsewhere") == elsewhere


def test_a_git_marker_that_cannot_be_checked_falls_back_to_the_working_directory(repo: Path) -> None:
    (repo / "src" / ".git").symlink_to(repo / "src" / ".git")  # stat fails with ELOOP, not "missing"

    assert config.memory_project_root(repo / "src" / "deep") == repo / "src" / "deep"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can search any folder")
def test_an_unreadable_parent_falls_back_to_the_working_directory(repo: Path) -> None:
    inner = repo / "src" / "deep"
    (repo / "src").chmod(0o600)  # no search permission: nothing below can be looked at
    try:
        assert config.memory_project_root(inner) == inner
        assert config.project_memory_dir(str(inner)) == hashed(inner)
    finally:
        (repo / "src").chmod(0o700)


def test_settings_key_the_memories_by_the_root_and_keep_the_project_at_the_working_directory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "src")
    settings = config.load_settings()

    assert settings.project_dir == repo / "src"  # tool permissions and CLAUDE.md stay with the cwd
    assert settings.memory_dir == config.project_memory_dir(str(repo))


# --- every front end agrees (the real program) ---------------------------------------------------


@pytest.fixture
def git_spy(tmp_path: Path) -> Path:
    """A `git` first on PATH that notes each command it is asked: the project's root is found
    without git (it is on every start-up path); only the repository's identity is asked of it,
    off that path (memory/identity.py)."""
    bin_dir, mark = tmp_path / "spy-bin", tmp_path / "git-was-run"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f'#!/bin/sh\necho "$@" >> {mark}\nexit 1\n')
    (bin_dir / "git").chmod(0o755)
    return bin_dir


def git_asked_only_for_identity(git_spy: Path) -> bool:
    mark = git_spy.parent / "git-was-run"
    asked = mark.read_text().splitlines() if mark.exists() else []
    return all("--is-shallow-repository" in line for line in asked)


def cli_in(folder: Path, git_spy: Path) -> Cli:
    cli = Cli(folder)
    cli.env["PATH"] = f"{git_spy}{os.pathsep}{cli.env.get('PATH', '')}"
    return cli


def test_a_memory_saved_at_the_root_is_seen_from_a_subfolder(
    repo: Path, api_env: FakeAnthropic, git_spy: Path
) -> None:
    memory_dir = config.project_memory_dir(str(repo))
    sub = repo / "src" / "deep"

    # Saved at the root, in print mode, by the model: a free write only if it is the memory dir.
    api_env.stream_replies.extend(
        [
            tool_reply(
                "write_file", {"file_path": str(memory_dir / "feedback_commits.md"), "content": ROLE_MEMORY}
            ),
            text_reply("Noted."),
        ]
    )
    saved = cli_in(repo, git_spy).run("-p", "I like small commits; remember that")
    assert saved.returncode == 0, saved.stderr
    assert (memory_dir / "feedback_user_prefers_small_commits.md").exists()

    # The shell commands from a subfolder find it.
    from_sub = cli_in(sub, git_spy)
    path = from_sub.run("memory", "path")
    assert path.returncode == 0 and path.stdout.strip() == str(memory_dir)
    listing = from_sub.run("memory", "list")
    assert listing.returncode == 0, listing.stderr
    assert "[feedback] user prefers small commits — one change per commit, each with a test" in listing.stdout

    # Print mode from the subfolder shows it to the model and saves to the same place for free.
    api_env.requests.clear()
    api_env.plain_replies.append(text_reply('{"selected_memories": []}'))
    other = (
        "---\nname: ci is slow\ndescription: the full suite takes ten minutes\ntype: project\n---\nSlow.\n"
    )
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": str(memory_dir / "project_ci.md"), "content": other}),
            text_reply("Saved."),
        ]
    )
    answer = from_sub.run("-p", "CI is slow; remember that")
    assert answer.returncode == 0, answer.stderr
    system = next(r for r in api_env.requests if r.stream).system[0]["text"]
    assert f"This project: `{memory_dir}`" in system
    assert "user prefers small commits" in system
    assert str(sub) in system  # the project itself is still the working directory
    assert (memory_dir / "project_ci_is_slow.md").exists()
    assert git_asked_only_for_identity(git_spy)


def test_the_repl_memory_path_from_a_subfolder_is_the_roots(repo: Path, git_spy: Path) -> None:
    memory_dir = config.project_memory_dir(str(repo))
    with cli_in(repo / "src", git_spy).terminal(columns=200) as term:
        term.wait_until_ready()
        term.submit("/memory path")
        term.expect(str(memory_dir).replace(".", r"\."))
    assert git_asked_only_for_identity(git_spy)
