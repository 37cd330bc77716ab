"""`/memory` in the REPL and `mini-claude memory ...` from the shell: no API key needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.config import project_memory_dir
from tests.cli_harness import Cli, Terminal


def memory_file(name: str, description: str, memory_type: str = "user", body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {memory_type}\n---\n{body}"


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    return project_memory_dir(str(project_dir))


@pytest.fixture
def cli(project_dir: Path) -> Cli:
    return Cli(project_dir)  # no ANTHROPIC_* settings at all


@pytest.fixture
def filled(memory_dir: Path) -> Path:
    memory_dir.mkdir(parents=True)
    (memory_dir / "user_role.md").write_text(
        memory_file("role", "backend engineer, prefers Go", body="Go, not Java.\n")
    )
    (memory_dir / "feedback_tests.md").write_text(
        memory_file("tests first", "write the failing test before the fix", "feedback")
    )
    (memory_dir / "project_tests_ci.md").write_text(
        memory_file("tests in CI", "CI runs the slow suite", "project")
    )
    (memory_dir / "reference_broken.md").write_text("no frontmatter here\n")
    return memory_dir


def test_path_prints_the_memory_dir_without_creating_it(cli: Cli, memory_dir: Path) -> None:
    result = cli.run("memory", "path")
    assert result.returncode == 0
    assert result.stdout.strip() == str(memory_dir)
    assert not memory_dir.exists()


def test_list_when_empty(cli: Cli) -> None:
    result = cli.run("memory", "list")
    assert result.returncode == 0 and result.stdout.strip() == "No memories saved yet."


def test_list_shows_each_memory_and_flags_broken_files(cli: Cli, filled: Path) -> None:
    result = cli.run("memory", "list")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "3 memories:"
    assert "[user] role — backend engineer, prefers Go" in lines
    assert "[feedback] tests first — write the failing test before the fix" in lines
    [broken] = [line for line in lines if line.startswith("[broken]")]
    assert "reference_broken.md" in broken and "frontmatter" in broken


def test_show_by_name_or_file_name(cli: Cli, filled: Path) -> None:
    by_name = cli.run("memory", "show", "role")
    by_file = cli.run("memory", "show", "user_role.md")
    assert by_name.returncode == by_file.returncode == 0
    assert by_name.stdout == by_file.stdout == (filled / "user_role.md").read_text()


def test_show_with_an_ambiguous_or_unknown_name_says_so(cli: Cli, filled: Path) -> None:
    ambiguous = cli.run("memory", "show", "tests")
    assert ambiguous.returncode == 1
    assert "matches 2 memories" in ambiguous.stderr
    assert "feedback_tests.md" in ambiguous.stderr and "project_tests_ci.md" in ambiguous.stderr
    unknown = cli.run("memory", "show", "nothing like this")
    assert unknown.returncode == 1 and "No memory named" in unknown.stderr


def test_memory_command_needs_an_action(cli: Cli) -> None:
    result = cli.run("memory")
    assert result.returncode == 2 and "usage:" in result.stderr


def start(term: Terminal) -> None:
    term.expect(r"/help for commands")
    term.expect_prompt()


def test_repl_memory_list_show_path_and_recalled(cli: Cli, filled: Path) -> None:
    with cli.terminal(columns=160) as term:
        start(term)
        term.submit("/memory")
        listing = term.expect(r"left out of the index[^\n]*")
        assert "3 memories:" in listing and "[user] role — backend engineer, prefers Go" in listing
        term.submit("/memory show role")
        shown = term.expect(r"Go, not Java\.")
        assert "user_role.md" in shown and "description: backend engineer, prefers Go" in shown
        term.submit("/memory path")
        term.expect(str(filled).replace(".", r"\."))
        term.submit("/memory recalled")
        term.expect("No memories recalled in this session yet.")
        term.submit("/memory frobnicate")
        term.expect("Unknown /memory action 'frobnicate'")


def test_repl_memory_rm_asks_first(cli: Cli, filled: Path) -> None:
    with cli.terminal() as term:
        start(term)
        term.submit("/memory rm role")
        term.expect(r"Delete memory 'role' \(user_role\.md\)\? \[y/N\]:")
        term.submit("n")
        term.expect("Kept it.")
        assert (filled / "user_role.md").exists()
        term.submit("/memory rm role")
        term.expect(r"\[y/N\]:")
        term.submit("y")
        term.expect(r"Deleted user_role\.md; the index was updated\.")
    assert not (filled / "user_role.md").exists()
    index = (filled / "MEMORY.md").read_text()
    assert "user_role.md" not in index and "feedback_tests.md" in index
