"""list_files and grep_search honour .gitignore inside a git work tree: git itself is asked what it
ignores (`git ls-files --others --ignored`), in the start's repository and in each repository the
walk meets below it. Real repositories, real files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tool_harness import make_ctx, run_tool

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
NOTE = "git ignores here (.gitignore)"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(project_dir: Path) -> Path:
    """A repository ignoring build output, logs and .env, with one ignored-looking file tracked."""
    files = {
        ".gitignore": "build/\n*.log\n.env\n/dist\n",
        "src/app.py": "needle = 1\n",
        "src/debug.log": "needle in a log\n",
        "build/gen.py": "needle = 2\n",
        "dist/bundle.js": "needle()\n",
        "lib/dist/keep.js": "needle()\n",  # /dist is anchored: this one is not ignored
        ".env": "needle=secret\n",
        "logs/kept.log": "needle tracked\n",
    }
    for name, text in files.items():
        (project_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (project_dir / name).write_text(text)
    git(project_dir, "init", "-q")
    git(project_dir, "add", "-f", "logs/kept.log")  # tracked: git shows it, ignored pattern or not
    return project_dir


def test_list_and_grep_skip_what_git_ignores_and_say_so(repo: Path) -> None:
    ctx, _ = make_ctx(repo)

    listing = run_tool(ctx, "list_files", pattern="**/*")
    grep = run_tool(ctx, "grep_search", pattern="needle")

    paths = [line for line in listing.content.splitlines() if not line.startswith("…")]
    assert paths == [
        ".gitignore",
        "lib/",
        "lib/dist/",
        "lib/dist/keep.js",
        "logs/",
        "logs/kept.log",
        "src/",
        "src/app.py",
    ]
    assert [line.split(":")[0] for line in grep.content.splitlines()[:-1]] == [
        "lib/dist/keep.js",
        "logs/kept.log",
        "src/app.py",
    ]
    assert "skipped 4 entries that " + NOTE in listing.content  # .env, build/, dist/, src/debug.log
    assert "skipped 4 entries that " + NOTE in grep.content


def test_a_search_in_a_subfolder_uses_the_repository_rules(repo: Path) -> None:
    ctx, _ = make_ctx(repo)

    result = run_tool(ctx, "list_files", pattern="*", path="src")

    assert result.content.splitlines()[0] == "src/app.py"
    assert "skipped 1 entries" in result.content and "debug.log" not in result.content


@pytest.mark.parametrize("path", ["build", "dist", "src/debug.log"])
def test_an_ignored_path_given_as_path_is_searched(repo: Path, path: str) -> None:
    (repo / "build" / "sub").mkdir()
    (repo / "build" / "sub" / "deep.py").write_text("needle = 3\n")
    ctx, _ = make_ctx(repo)

    result = run_tool(ctx, "grep_search", pattern="needle", path=path)
    inner = run_tool(ctx, "grep_search", pattern="needle", path="build/sub")

    assert result.content.startswith(path) and NOTE not in result.content
    assert inner.content == "build/sub/deep.py:1:needle = 3"


def test_a_repository_below_the_start_has_its_own_rules(repo: Path) -> None:
    inner = repo / "vendor" / "lib"
    (inner / "out").mkdir(parents=True)
    (inner / ".gitignore").write_text("out/\n")
    (inner / "out" / "x.py").write_text("needle\n")
    (inner / "a.py").write_text("needle\n")
    git(inner, "init", "-q")
    ctx, _ = make_ctx(repo)

    result = run_tool(ctx, "list_files", pattern="vendor/**/*.py")

    assert result.content.splitlines()[0] == "vendor/lib/a.py"
    assert "vendor/lib/out" not in result.content and "skipped 5 entries" in result.content


def test_outside_a_repository_or_without_git_nothing_is_ignored(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_programs = tmp_path / "no-programs"
    no_programs.mkdir()
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / ".gitignore").write_text("*.log\n")  # no repository: git does not read it
    (plain / "a.log").write_text("needle\n")
    plain_ctx, _ = make_ctx(plain)
    ctx, _ = make_ctx(repo)

    outside = run_tool(plain_ctx, "list_files", pattern="*.log")
    monkeypatch.setenv("PATH", str(no_programs))
    without_git = run_tool(ctx, "list_files", pattern="**/*.log")

    assert outside.content == "a.log"
    assert without_git.content.splitlines() == ["logs/kept.log", "src/debug.log"]
