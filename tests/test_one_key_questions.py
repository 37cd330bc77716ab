"""Every REPL question takes one key, as a permission question does: `/memory rm` and `/memory
tidy` answer with `y` alone (Enter, `n` or Esc: no); a key a question does not take shows which
ones it does, and the question stays; a permission question also takes Claude Code's 1/2/3."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import memory_text, seed_memories
from tests.test_memory_tidy_cli import RELEASE, RELEASE_DUP, script_merge
from tests.test_repl_keys import ESC, QUESTION, REFUSED, write_call

DELETE_QUESTION = r"Delete memory 'role' \(user_role\.md\)\? \[y/N\]:"
CONFIRM_HINT = "Press y for yes, n/Enter/Esc for no"
PERMISSION_HINT = "Press y/1 for yes, a/2 for always, n/3/Esc for no"


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    folder = project_memory_dir(str(project_dir))
    seed_memories(folder, {"user_role.md": memory_text("role", "backend engineer", "user")})
    return folder


# --- yes/no confirmations -----------------------------------------------------------------------


def test_y_alone_deletes_and_what_is_typed_next_is_a_new_line(cli: Cli, memory_dir: Path) -> None:
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/memory rm role")
        term.expect(DELETE_QUESTION)
        term.type("y")  # no Enter: the habit the permission questions teach
        term.expect(r"Deleted user_role\.md")
        term.expect_prompt()
        term.submit("/memory")  # a command of its own, not "y/memory" appended to the answer
        term.expect("No memories")
    assert not (memory_dir / "user_role.md").exists()


@pytest.mark.parametrize("key", ["n", "N", "\r", ESC, "\x03"], ids=["n", "N", "enter", "esc", "ctrl-c"])
def test_n_enter_and_esc_keep_the_memory(cli: Cli, memory_dir: Path, key: str) -> None:
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/memory rm role")
        term.expect(DELETE_QUESTION)
        term.type(key)
        shown = term.expect("Kept it.")
        term.expect_prompt()
    assert "[y/N]: no\n" in shown  # the answer stays on the question's line
    assert (memory_dir / "user_role.md").exists()


def test_another_key_shows_the_keys_and_the_question_stays(cli: Cli, memory_dir: Path) -> None:
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/memory rm role")
        term.expect(DELETE_QUESTION)
        term.type("x")
        term.expect(CONFIRM_HINT)
        term.type("1")  # a digit is no answer here either (the hint is already there)
        time.sleep(0.3)
        assert (memory_dir / "user_role.md").exists()
        term.type("y")
        term.expect(r"Deleted user_role\.md")
    assert not (memory_dir / "user_role.md").exists()


def test_tidy_asks_with_one_key_each_time(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    folder = project_memory_dir(str(project_dir))
    seed_memories(folder, {"project_release.md": RELEASE, "project_release_2.md": RELEASE_DUP})
    script_merge(api_env)
    with cli.terminal(columns=120) as term:
        term.wait_until_ready()
        term.submit("/memory tidy")
        term.expect(r"Apply all 2 changes\? \[y/N\]:")
        term.type("n")
        term.expect(r"Go through them one by one\? \[y/N\]:")
        term.type("y")
        term.expect(r"Apply this change\? \[y/N\]:")
        term.type("y")  # the merge
        term.expect(r"\[2/2\] deleted")
        term.expect(r"Apply this change\? \[y/N\]:")
        term.type("\r")  # the delete: Enter is the default, no
        term.expect(r"Applied 1 change")
        term.expect_prompt()
    assert (folder / "project_release_2.md").exists()
    assert "2026-03-13" in (folder / "project_release.md").read_text()


# --- permission questions: the keys they take ---------------------------------------------------------


@pytest.mark.parametrize("key", ["\r", "x", "4"], ids=["enter", "x", "4"])
def test_a_key_the_permission_question_does_not_take_shows_the_ones_it_does(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, key: str
) -> None:
    api_env.stream_replies.extend([write_call("kept.txt"), text_reply("Not written.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("write it")
        term.expect(QUESTION)
        term.type(key)
        term.expect(PERMISSION_HINT)
        time.sleep(0.3)
        assert not (project_dir / "kept.txt").exists() and len(api_env.requests) == 1  # still asking
        term.type("n")
        term.expect(REFUSED)
    assert not (project_dir / "kept.txt").exists()


def test_claude_codes_menu_digits_answer_yes_always_and_no(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.extend(
        [write_call("one.txt"), write_call("two.txt"), write_call("three.txt"), text_reply("Two written.")]
    )
    api_env.stream_replies.extend([tool_call_shell("touch nope"), text_reply("Not run.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("write three files")
        term.expect(QUESTION)
        term.type("1")  # yes, once
        term.expect(r"two\.txt")
        term.expect(QUESTION)
        term.type("2")  # yes, and don't ask again for write_file
        term.expect("Two written.")
        term.expect_prompt()
        term.submit("run it")
        term.expect(QUESTION)
        term.type("3")  # no
        shown = term.expect(REFUSED)
    assert all((project_dir / name).exists() for name in ("one.txt", "two.txt", "three.txt"))
    assert "→ permission denied" in shown and not (project_dir / "nope").exists()


def test_without_always_2_is_no_answer_and_the_hint_leaves_it_out(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    """A path outside the project is asked each time ([y]es, [n]o): `2` must not become a yes."""
    outside = project_dir.parent / "outside.txt"
    api_env.stream_replies.extend([write_call(str(outside)), text_reply("Ok.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("write outside")
        term.expect(r"\[y\]es, \[n\]o:")
        term.type("2")
        hint = term.expect(r"for no")
        time.sleep(0.3)
        assert not outside.exists()
        term.type("3")
        term.expect(REFUSED)
    assert "Press y/1 for yes, n/3/Esc" in hint and "always" not in hint.split("Press")[-1]
    assert not outside.exists()


def tool_call_shell(command: str) -> object:
    from tests.fake_api import tool_reply

    return tool_reply("run_shell", {"command": command})
