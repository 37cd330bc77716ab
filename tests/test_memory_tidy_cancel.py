"""Cancelling a tidy's review (Ctrl+C, Esc, the end of input) at any of its questions applies
nothing, not even the changes accepted one by one before it: in the review itself, in the REPL's
`/memory tidy` and in `mini-claude memory tidy` on a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.ui.commands.memory.tidy_review import build_proposal, review_and_apply
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic
from tests.kit import memory_text
from tests.tidy_kit import ScriptedUser, change, changes_answer, delete, model, read_answer, seed, snapshot

FILES = {f"project_{n}.md": memory_text(f"mem {n}", f"facts about {n}") for n in "abc"}


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    return project_memory_dir(str(project_dir))


@pytest.fixture
def store(memory_dir: Path) -> MemoryStore:
    return seed(memory_dir, FILES)


def script_three_changes(fake: FakeAnthropic) -> None:
    fake.plain_replies.append(read_answer(*FILES))
    fake.plain_replies.append(
        changes_answer(
            change("project_a.md", "sharpen a", name="mem a", description="sharper a"),
            delete("project_b.md", "dup b"),
            delete("project_c.md", "dup c"),
        )
    )


@pytest.mark.parametrize(
    ("answers", "questions"),
    [
        ([None], 1),  # at "Apply all 3 changes?"
        ([False, None], 2),  # at "Go through them one by one?"
        ([False, True, True, None], 4),  # after accepting the first change
        ([False, True, True, True, None], 5),  # at the last change, two accepted
    ],
    ids=["apply all", "one by one", "second change", "last change"],
)
def test_cancelling_at_any_question_applies_nothing_and_asks_no_more(
    api_env: FakeAnthropic, store: MemoryStore, memory_dir: Path, answers: list[bool | None], questions: int
) -> None:
    script_three_changes(api_env)
    before = snapshot(memory_dir)
    user = ScriptedUser(answers)
    proposal = build_proposal(store, model(api_env), None, "", user.io())
    assert proposal is not None

    assert review_and_apply(store, proposal, user.io())

    assert len(user.questions) == questions and user.answers == []
    assert snapshot(memory_dir) == before and not (memory_dir / ".trash").exists()
    assert user.text.endswith("Tidy cancelled. Nothing was changed.")
    assert "Applied" not in user.text


def test_a_single_change_cancelled_is_not_applied(
    api_env: FakeAnthropic, store: MemoryStore, memory_dir: Path
) -> None:
    api_env.plain_replies.extend([read_answer("project_b.md"), changes_answer(delete("project_b.md"))])
    before = snapshot(memory_dir)
    user = ScriptedUser([None])
    proposal = build_proposal(store, model(api_env), None, "", user.io())
    assert proposal is not None and review_and_apply(store, proposal, user.io())
    assert snapshot(memory_dir) == before and "Tidy cancelled" in user.text


@pytest.mark.parametrize("key", ["\x03", "\x1b"], ids=["ctrl-c", "esc"])
def test_in_the_repl_ctrl_c_or_esc_after_accepting_one_change_applies_none(
    api_env: FakeAnthropic, project_dir: Path, store: MemoryStore, memory_dir: Path, key: str
) -> None:
    script_three_changes(api_env)
    before = snapshot(memory_dir)
    with Cli(project_dir).terminal() as term:
        term.wait_until_ready()
        term.submit("/memory tidy")
        term.expect(r"Apply all 3 changes\?")
        term.type("n")  # one key, no Enter
        term.expect(r"one by one\?")
        term.type("y")
        term.expect(r"\[1/3\]")
        term.expect(r"Apply this change\?")
        term.type("y")
        term.expect(r"\[2/3\]")
        term.expect(r"Apply this change\?")
        term.type(key)
        term.expect("Tidy cancelled. Nothing was changed.")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0
    assert snapshot(memory_dir) == before and not (memory_dir / ".trash").exists()


@pytest.mark.parametrize("key", ["ctrl-c", "ctrl-d", "esc"])
def test_mini_claude_memory_tidy_on_a_terminal_cancels_alike(
    api_env: FakeAnthropic, project_dir: Path, store: MemoryStore, memory_dir: Path, key: str
) -> None:
    script_three_changes(api_env)
    before = snapshot(memory_dir)
    with Cli(project_dir).terminal("memory", "tidy") as term:
        term.expect(r"Apply all 3 changes\?")
        term.submit("n")
        term.expect(r"one by one\?")
        term.submit("y")
        term.expect(r"\[1/3\]")
        term.expect(r"Apply this change\?")
        term.submit("y")
        term.expect(r"\[2/3\]")
        term.expect(r"Apply this change\?")
        if key == "esc":
            term.submit("\x1b")
        else:
            term.ctrl(key[-1])
        term.expect("Tidy cancelled. Nothing was changed.")
        assert term.wait_exit() == 0
    assert snapshot(memory_dir) == before and not (memory_dir / ".trash").exists()
