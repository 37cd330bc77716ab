"""`mini-claude memory edit|rm|projects` from the shell, and the project record that maps each
`~/.mini-claude/projects/<hash>` folder back to its project."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir, project_state_dir
from mini_claude.memory.project_record import RECORD_FILE
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply


def memory_file(name: str, description: str, memory_type: str = "user", body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {memory_type}\n---\n{body}"


@pytest.fixture
def cli(project_dir: Path) -> Cli:
    return Cli(project_dir)


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    folder = project_memory_dir(str(project_dir))
    folder.mkdir(parents=True)
    (folder / "user_role.md").write_text(memory_file("role", "backend engineer, prefers Go"))
    (folder / "feedback_tests.md").write_text(memory_file("tests first", "failing test first", "feedback"))
    return folder


def editor_script(tmp_path: Path, body: str) -> str:
    """A small editor: a shell script run with the file's path as $1."""
    script = tmp_path / "editor.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_edit_opens_the_editor_and_the_index_follows(cli: Cli, memory_dir: Path, tmp_path: Path) -> None:
    cli.env["EDITOR"] = editor_script(tmp_path, 'sed -i "s/prefers Go/prefers Rust/" "$1"')
    cli.env.pop("VISUAL", None)

    result = cli.run("memory", "edit", "role")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Saved user_role.md; the index was updated.\n"
    assert "backend engineer, prefers Rust" in (memory_dir / "MEMORY.md").read_text()


def test_edit_that_breaks_the_file_says_so(cli: Cli, memory_dir: Path, tmp_path: Path) -> None:
    cli.env["VISUAL"] = editor_script(tmp_path, 'printf -- "---\\nno frontmatter\\n" > "$1"')

    result = cli.run("memory", "edit", "user_role.md")

    assert result.returncode == 0
    assert "user_role.md is now broken:" in result.stdout and "stays out of the index" in result.stdout
    assert "role" not in (memory_dir / "MEMORY.md").read_text()


def test_an_editor_that_fails_is_an_error(cli: Cli, memory_dir: Path, tmp_path: Path) -> None:
    cli.env["VISUAL"] = editor_script(tmp_path, "exit 3")
    failed = cli.run("memory", "edit", "role")
    cli.env["VISUAL"] = str(tmp_path / "no-such-editor")
    missing = cli.run("memory", "edit", "role")

    assert failed.returncode == 1
    assert failed.stderr == "The editor exited with status 3.\nNo changes to user_role.md.\n"
    assert missing.returncode == 1 and "Could not start" in missing.stderr and "$VISUAL" in missing.stderr


def test_edit_of_an_unknown_memory_names_the_list_command(cli: Cli, memory_dir: Path) -> None:
    result = cli.run("memory", "edit", "nothing like this")
    assert result.returncode == 1 and "see mini-claude memory list" in result.stderr


def test_rm_without_a_terminal_needs_yes(cli: Cli, memory_dir: Path) -> None:
    refused = cli.run("memory", "rm", "role")
    assert refused.returncode == 2 and "add --yes" in refused.stderr
    assert (memory_dir / "user_role.md").exists()

    deleted = cli.run("memory", "rm", "-y", "role")

    assert deleted.returncode == 0
    assert deleted.stdout == "Deleted user_role.md; the index was updated.\n"
    assert not (memory_dir / "user_role.md").exists()
    assert "role" not in (memory_dir / "MEMORY.md").read_text()


def test_rm_on_a_terminal_asks_first(cli: Cli, memory_dir: Path) -> None:
    with cli.terminal("memory", "rm", "role") as term:
        term.expect(r"Delete memory 'role' \(user_role\.md\)\? \[y/N\]: ")
        term.submit("n")
        term.expect("Kept it.")
        assert term.wait_exit() == 0
    assert (memory_dir / "user_role.md").exists()
    with cli.terminal("memory", "rm", "tests first") as term:
        term.expect(r"\[y/N\]: ")
        term.submit("y")
        term.expect(r"Deleted feedback_tests\.md")
        assert term.wait_exit() == 0
    assert not (memory_dir / "feedback_tests.md").exists()


def test_a_session_records_its_project_and_projects_lists_it(
    api_env: FakeAnthropic, tmp_path: Path, memory_dir: Path, project_dir: Path
) -> None:
    other = tmp_path / "other"
    (other / "src").mkdir(parents=True)
    (other / ".git").mkdir()
    api_env.stream_replies.extend([text_reply("one"), text_reply("two")])
    assert Cli(project_dir).run("-p", "hello").returncode == 0
    assert Cli(other / "src").run("-p", "hello").returncode == 0  # the project is the git root

    record = json.loads((project_state_dir(str(project_dir)) / RECORD_FILE).read_text())
    assert record == {"version": 2, "root": str(project_dir)}  # not a repository: no first commits
    shutil.rmtree(other)
    result = Cli(project_dir).run("memory", "projects")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    here = project_state_dir(str(project_dir)).name
    assert f"    2  {here}  {project_dir}  (this project)" in lines
    assert f"    0  {project_state_dir(str(other)).name}  {other}  (no longer exists)" in lines


def test_projects_before_any_session(cli: Cli) -> None:
    result = cli.run("memory", "projects")
    assert result.returncode == 0 and result.stdout.startswith("No projects yet (looked in ")


def test_a_folder_from_before_project_records_is_listed_as_unknown(cli: Cli, memory_dir: Path) -> None:
    result = cli.run("memory", "projects")
    [line] = result.stdout.splitlines()
    assert line.startswith(f"    2  {memory_dir.parent.name}  ?  (unknown project: no {RECORD_FILE}")
    assert line.endswith("(this project)")


def test_a_hand_edited_record_is_put_right_by_the_next_session(
    api_env: FakeAnthropic, project_dir: Path, memory_dir: Path
) -> None:
    record = memory_dir.parent / RECORD_FILE
    record.write_text('{"version": 1, "root": "/somewhere/else"}')
    listed = Cli(project_dir).run("memory", "projects")
    assert "names /somewhere/else, whose folder is another" in listed.stdout

    api_env.stream_replies.append(text_reply("ok"))
    assert Cli(project_dir).run("-p", "hello").returncode == 0

    assert json.loads(record.read_text())["root"] == str(project_dir)
