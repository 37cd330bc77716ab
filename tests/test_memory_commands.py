"""`/memory` in the REPL and `mini-claude memory ...` from the shell: no API key needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

import mini_claude.ui.commands.memory.command  # noqa: F401  (registers /memory)
from mini_claude.app.session import Session
from mini_claude.core.config import project_memory_dir
from mini_claude.memory.listing import NameNotFound, resolve
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.ui.commands.registry import CommandCompleter
from tests.agent_harness import Harness
from tests.cli_harness import Cli


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
    (memory_dir / "reference_broken.md").write_text("---\nno frontmatter close here\n")
    return memory_dir


def test_path_prints_the_memory_dir_without_creating_it(cli: Cli, memory_dir: Path) -> None:
    result = cli.run("memory", "path")
    assert result.returncode == 0
    assert result.stdout.strip() == str(memory_dir)
    assert not memory_dir.exists()


def test_list_when_empty_names_the_project_and_the_folder(
    cli: Cli, project_dir: Path, memory_dir: Path
) -> None:
    result = cli.run("memory", "list")
    assert result.returncode == 0
    assert result.stdout == f"No memories saved yet for {project_dir} (looked in {memory_dir}).\n"


def test_list_shows_each_memory_and_flags_broken_files(cli: Cli, filled: Path) -> None:
    result = cli.run("memory", "list")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "3 memories, 1 broken file:" and len(lines) == 1 + 3 + 1  # the count names every line
    assert "[user] role — backend engineer, prefers Go  (user_role.md)" in lines
    assert "[feedback] tests first — write the failing test before the fix  (feedback_tests.md)" in lines
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


def test_memory_without_an_action_lists_as_slash_memory_does(cli: Cli, filled: Path) -> None:
    alone, listed = cli.run("memory"), cli.run("memory", "list")
    assert alone.returncode == 0 and alone.stderr == ""
    assert alone.stdout == listed.stdout and alone.stdout.startswith("3 memories, 1 broken file:")


def test_an_unknown_action_is_one_usage_error(cli: Cli) -> None:
    result = cli.run("memory", "frobnicate")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("usage:") == 1 and "invalid choice: 'frobnicate'" in result.stderr


def test_repl_memory_list_show_path_and_recalled(cli: Cli, filled: Path) -> None:
    with cli.terminal(columns=160) as term:
        term.wait_until_ready()
        term.submit("/memory")
        listing = term.expect(r"left out of the index[^\n]*")
        assert "3 memories, 1 broken file:" in listing
        assert "[user] role — backend engineer, prefers Go  (user_role.md)" in listing
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
        term.wait_until_ready()
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


LATIN1_MEMORY = (
    b"---\nname: caf\xe9 notes\ndescription: where we meet\ntype: user\n---\nThe one by the station.\n"
)


@pytest.fixture
def latin1(memory_dir: Path) -> Path:
    """A hand-written memory whose name has a Latin-1 byte: it reads back as `caf\ufffd notes`."""
    memory_dir.mkdir(parents=True, exist_ok=True)
    (memory_dir / "user_cafe_notes.md").write_bytes(LATIN1_MEMORY)
    return memory_dir


def test_a_name_read_with_a_replacement_character_is_found_by_what_the_user_types(
    cli: Cli, latin1: Path
) -> None:
    listed = cli.run("memory", "list")
    assert listed.stdout.splitlines()[1].startswith("[user] caf\ufffd notes — where we meet")

    for typed in ("café notes", "CAFÉ  Notes", "cafe notes", "caf\ufffd notes", "café"):
        shown = cli.run("memory", "show", typed)
        assert shown.returncode == 0, (typed, shown.stderr)
        assert "The one by the station.\n[not valid UTF-8: shown with U+FFFD in 1 place" in shown.stdout
    assert cli.run("memory", "show", "cafés notes").returncode == 1  # one character, not several


def test_replacement_character_matching_prefers_exact_names_and_refuses_ambiguity(latin1: Path) -> None:
    store = MemoryStore(latin1)
    (latin1 / "user_cafe_notes_2.md").write_text(memory_file("café notes", "spelled right"))
    assert resolve(store, "café notes").file_name == "user_cafe_notes_2.md"  # the exact name wins
    assert resolve(store, "cafe notes").file_name == "user_cafe_notes.md"  # only the U+FFFD one fits

    (latin1 / "user_cafe_notes_3.md").write_bytes(LATIN1_MEMORY.replace(b"caf\xe9", b"caf\xe8"))
    with pytest.raises(NameNotFound, match="matches 2 memories"):
        resolve(store, "cafe notes")  # both `caf\ufffd notes` fit: the user must pick a file name
    # A whole-name match through U+FFFD beats a longer name that merely starts with the query.
    (latin1 / "user_cafe_notes_3.md").unlink()
    (latin1 / "user_cafe_notes_long.md").write_text(memory_file("cafe notes and more", "longer"))
    assert resolve(store, "cafe notes").file_name == "user_cafe_notes.md"
    # A name that is all U+FFFD (another encoding entirely) answers to no word it does not spell.
    (latin1 / "user_garbled.md").write_bytes(LATIN1_MEMORY.replace(b"caf\xe9 notes", b"\xe0\xe1\xe2\xe3"))
    (latin1 / "user_role.md").write_text(memory_file("role", "backend engineer"))
    assert resolve(store, "rol").file_name == "user_role.md"
    with pytest.raises(NameNotFound, match="No memory named 'abcd'"):
        resolve(store, "abcd")
    assert resolve(store, "\ufffd" * 4).file_name == "user_garbled.md"


def test_repl_memory_rm_by_the_name_the_user_means(cli: Cli, latin1: Path) -> None:
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/memory rm café notes")
        term.expect(r"\(user_cafe_notes\.md\)\? \[y/N\]:")
        term.submit("y")
        term.expect(r"Deleted user_cafe_notes\.md")
    assert not (latin1 / "user_cafe_notes.md").exists()


def test_the_shell_points_to_the_shell_list_command(cli: Cli, filled: Path) -> None:
    unknown = cli.run("memory", "show", "nothing like this")
    assert unknown.returncode == 1
    assert "(see mini-claude memory list for the list)" in unknown.stderr
    assert "/memory" not in unknown.stderr


def test_the_repl_points_to_slash_memory(cli: Cli, filled: Path) -> None:
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/memory show nothing like this")
        term.expect(r"No memory named 'nothing like this' \(see /memory for the list\)\.")


def test_edit_without_changes_says_so(cli: Cli, filled: Path) -> None:
    before = (filled / "user_role.md").stat().st_mtime_ns
    cli.env["VISUAL"] = "true"  # quits at once, writing nothing
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/memory edit role")
        said = term.expect(r"No changes to user_role\.md\.")
        assert "Saved" not in said and "index" not in said
    assert (filled / "user_role.md").stat().st_mtime_ns == before


def test_edit_with_changes_still_saves(cli: Cli, filled: Path) -> None:
    cli.env["VISUAL"] = "sed -i s/prefers/likes/"
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/memory edit role")
        term.expect(r"Saved user_role\.md; the index was updated\.")
    assert "backend engineer, likes Go" in (filled / "MEMORY.md").read_text()


@pytest.fixture
def only_broken(memory_dir: Path) -> Path:
    memory_dir.mkdir(parents=True)
    (memory_dir / "reference_broken.md").write_text("---\nno frontmatter close here\n")
    (memory_dir / "user_half.md").write_text("---\nname: half\n---\nno type or description\n")
    return memory_dir


def test_only_broken_files_are_listed_as_such(cli: Cli, only_broken: Path) -> None:
    result = cli.run("memory", "list")
    lines = result.stdout.splitlines()
    assert result.returncode == 0
    assert lines[0] == "No usable memories; 2 broken files:"
    assert len(lines) == 3 and all(line.startswith("[broken] ") for line in lines[1:])

    (only_broken / "user_half.md").unlink()
    assert cli.run("memory", "list").stdout.splitlines()[0] == "No usable memories; 1 broken file:"


def test_repl_lists_only_broken_files_as_such(cli: Cli, only_broken: Path) -> None:
    with cli.terminal(columns=160) as term:
        term.wait_until_ready()
        term.submit("/memory")
        listing = term.expect(r"user_half\.md[^\n]*")
        assert "No usable memories; 2 broken files:" in listing and "0 memories" not in listing


def memory_completions(session: Session, text: str) -> list[tuple[str, str]]:
    completer = CommandCompleter(session)
    found = completer.get_completions(Document(text), CompleteEvent(text_inserted=True))
    return [(text[: len(text) + c.start_position] + c.text, c.display_meta_text) for c in found]


def test_completion_offers_memory_actions_then_names(project_dir: Path, filled: Path) -> None:
    session = Harness().start().session
    (filled / "user_cafe_notes.md").write_bytes(LATIN1_MEMORY)

    actions = memory_completions(session, "/memory ")
    moves = ("promote", "demote", "share")
    assert [text for text, _ in actions] == [
        f"/memory {a}" for a in ("show", "edit", "rm", *moves, "path", "recalled", "search", "tidy", "undo")
    ]
    assert all(description for _, description in actions)
    assert memory_completions(session, "/memory r") == [
        ("/memory rm", "delete a memory (asks first)"),
        ("/memory recalled", "memories recalled this session"),
    ]

    names = dict(memory_completions(session, "/memory show "))
    assert names["/memory show role"] == "[user] backend engineer, prefers Go"
    assert "/memory show tests first" in names and "/memory show tests in CI" in names
    assert names["/memory show reference_broken.md"].startswith("broken: ")  # no name: its file name
    assert sorted(text for text, _ in memory_completions(session, "/memory rm TESTS ")) == [
        "/memory rm tests first",
        "/memory rm tests in CI",
    ]
    assert [text for text, _ in memory_completions(session, "/memory edit café")] == [
        "/memory edit caf\ufffd notes"
    ]
    assert sorted(text for text, _ in memory_completions(session, "/memory show user_")) == [
        "/memory show user_cafe_notes.md",
        "/memory show user_role.md",
    ]
    assert memory_completions(session, "/memory path ") == []
    assert memory_completions(session, "/memory recalled x") == []
