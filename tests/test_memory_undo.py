"""`/memory undo` and `mini-claude memory undo` revert the last change of any kind: a `/memory rm`,
the model's save over a memory, a tidy (tests/test_memory_tidy*.py); the old version is kept in
`.trash/` first, and a file changed since is never overwritten."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from mini_claude.memory.provenance import without_provenance
from mini_claude.memory.store import trash
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.undo import last_change
from mini_claude.ui.commands.memory.actions import undo_last_change
from tests.agent_harness import Harness
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import memory_text, seed_memories

ROLE = memory_text("role", "backend engineer", "user", body="Go, not Java.\n")
RUST = memory_text("role", "backend engineer", "user", body="Rust now.\n")
LONG_AGO = 1_600_000_000


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    folder = project_memory_dir(str(project_dir))
    seed_memories(folder, {"user_role.md": ROLE})
    os.utime(folder / "user_role.md", (LONG_AGO, LONG_AGO))
    return folder


def test_rm_then_undo_from_the_shell_brings_the_memory_back_as_it_was(
    project_dir: Path, memory_dir: Path
) -> None:
    cli = Cli(project_dir)
    assert cli.run("memory", "rm", "-y", "role").returncode == 0
    assert not (memory_dir / "user_role.md").exists()

    undone = cli.run("memory", "undo")

    assert undone.returncode == 0, undone.stderr
    assert undone.stdout == (
        "restored user_role.md\nThe deletion of user_role.md was undone; the index was updated.\n"
    )
    assert (memory_dir / "user_role.md").read_text() == ROLE
    assert os.stat(memory_dir / "user_role.md").st_mtime == LONG_AGO  # as old as its facts
    assert "user_role.md" in (memory_dir / "MEMORY.md").read_text()
    again = cli.run("memory", "undo")
    assert again.returncode == 1 and again.stdout.startswith(
        "The last change, the deletion of user_role.md ("
    )


def test_rm_then_undo_in_the_repl_asks_first(project_dir: Path, memory_dir: Path) -> None:
    with Cli(project_dir).terminal() as term:
        term.wait_until_ready()
        term.submit("/memory rm role")
        term.expect(r"Delete memory 'role' \(user_role\.md\)\?")
        term.type("y")
        term.expect(r"Deleted user_role\.md")
        term.submit("/memory undo")
        term.expect(r"Undo the deletion of user_role\.md \([^\n]*1 change\)\? \[y/N\]:")
        term.type("n")
        term.expect("Nothing was undone.")
        assert not (memory_dir / "user_role.md").exists()
        term.submit("/memory undo")
        term.expect(r"Undo the deletion")
        term.type("y")
        term.expect("The deletion of user_role.md was undone")
        term.submit("/exit")
        assert term.wait_exit() == 0
    assert (memory_dir / "user_role.md").read_text() == ROLE


def model_overwrites_role(api_env: FakeAnthropic, memory_dir: Path) -> None:
    """The model saves over a memory written by hand: it asks first (the diff shown); `y`."""
    harness = Harness(answers=["y"]).start()
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": f"{memory_dir}/user_role.md", "content": RUST}),
            text_reply("Ok."),
        ]
    )
    assert harness.turn("I moved to Rust, remember it").reason == "done"
    [question] = harness.questions
    assert question.reason == "a memory someone wrote or edited by hand" and not question.allow_always
    assert question.preview is not None and "Rust now." in str(question.preview)
    assert without_provenance((memory_dir / "user_role.md").read_text()) == RUST


def test_undo_after_the_models_save_over_a_memory_puts_the_old_one_back(
    api_env: FakeAnthropic, project_dir: Path, memory_dir: Path
) -> None:
    model_overwrites_role(api_env, memory_dir)
    saved = (memory_dir / "user_role.md").read_text()

    undone = Cli(project_dir).run("memory", "undo")

    assert undone.returncode == 0, undone.stderr
    assert "The model's update of user_role.md was undone" in undone.stdout
    assert (memory_dir / "user_role.md").read_text() == ROLE
    [folder] = (memory_dir / ".trash").iterdir()
    assert (folder / "before" / "user_role.md").read_text() == ROLE
    assert (folder / "after" / "user_role.md").read_text() == saved  # the model's version, kept too


def test_undo_never_overwrites_a_hand_edit_made_after_the_models_save(
    api_env: FakeAnthropic, project_dir: Path, memory_dir: Path
) -> None:
    model_overwrites_role(api_env, memory_dir)
    hand = memory_text("role", "backend engineer", "user", body="Rust and Go, edited by hand.\n")
    (memory_dir / "user_role.md").write_text(hand)

    undone = Cli(project_dir).run("memory", "undo")

    assert undone.returncode == 0, undone.stderr
    assert (
        "user_role.md was edited since the model's update of user_role.md: not overwritten" in undone.stdout
    )
    assert "before/user_role.md" in undone.stdout and "Nothing was put back." in undone.stdout
    assert (memory_dir / "user_role.md").read_text() == hand


def test_undo_after_the_models_new_memory_removes_it_and_keeps_it_in_the_trash(
    api_env: FakeAnthropic, project_dir: Path, memory_dir: Path
) -> None:
    harness = Harness().start()
    target = memory_dir / "project_deploys.md"
    content = memory_text("deploys", "on thursdays", "project")
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": str(target), "content": content}), text_reply("Noted.")]
    )
    assert harness.turn("we deploy on thursdays").reason == "done"
    assert harness.questions == [] and target.exists()

    undone = Cli(project_dir).run("memory", "undo")

    assert undone.returncode == 0, undone.stderr
    assert (
        "removed project_deploys.md (the model's new memory project_deploys.md had created it"
        in undone.stdout
    )
    assert not target.exists() and "deploys" not in (memory_dir / "MEMORY.md").read_text()
    [kept] = (memory_dir / ".trash").glob("*/after/project_deploys.md")
    assert without_provenance(kept.read_text()) == content


def test_the_trash_keeps_the_newest_change_sets_only(memory_dir: Path) -> None:
    store = MemoryStore(memory_dir)
    for number in range(trash.KEEP_SETS + 5):
        store.save(name="role", description=f"version {number}", memory_type="user", body="x\n")
    kept = sorted((memory_dir / ".trash").iterdir())
    assert len(kept) == trash.KEEP_SETS
    newest = (kept[-1] / "before" / "user_role.md").read_text()
    assert f"version {trash.KEEP_SETS + 3}" in newest  # what the last save replaced
    assert all(os.stat(folder).st_mode & 0o777 == 0o700 for folder in [memory_dir / ".trash", *kept])


def test_a_change_made_while_the_question_is_open_is_not_undone_in_its_place(memory_dir: Path) -> None:
    store = MemoryStore(memory_dir)
    store.delete(store.find("role")[0])
    other_session = MemoryStore(memory_dir)

    def answer_after_another_save(question: str) -> bool:
        assert question.startswith("Undo the deletion of user_role.md (")
        other_session.save(name="deploys", description="on thursdays", memory_type="project", body="x\n")
        other_session.save(name="deploys", description="on fridays", memory_type="project", body="y\n")
        return True

    undone, lines = undo_last_change(store, answer_after_another_save)

    assert not undone and lines == [
        f"Undo: the last change is now {last_change(store)[1]}, made since you were asked; nothing was undone"
    ]
    assert not (memory_dir / "user_role.md").exists()
    assert "on fridays" in (memory_dir / "project_deploys.md").read_text()


def test_on_a_filesystem_without_hard_links_the_old_version_is_still_kept_and_undone(
    memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # vfat and some network shares answer link(2) with EPERM: the trash writes its copy in place.
    def no_hard_links(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_hard_links)
    store = MemoryStore(memory_dir)
    store.save(name="role", description="backend engineer", memory_type="user", body="Rust now.\n")

    [kept] = (memory_dir / ".trash").glob("*/before/user_role.md")
    assert kept.read_text() == ROLE and os.stat(kept).st_mode & 0o777 == 0o600
    assert not [p for p in kept.parent.iterdir() if p.name.endswith(".tmp")]
    undone, _ = undo_last_change(store, lambda question: True)
    assert undone and (memory_dir / "user_role.md").read_text() == ROLE
