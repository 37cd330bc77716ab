"""Two memories never end up with one name through a tidy or its undo: a change keeps the name of
the memory it touches against a new memory proposed under that name, and `/memory undo` reverts
only files still as the tidy left them, never bringing back a file deleted since nor a memory
whose name was taken meanwhile; each file skipped is named in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from mini_claude.memory.provenance import without_provenance
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.tidy.apply import apply_tidy
from mini_claude.memory.tidy.review import TidyReview
from mini_claude.memory.undo import undo_last
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic
from tests.kit import memory_text
from tests.tidy_kit import change, changes_answer, create, delete, model, read_answer, seed, snapshot


def memories(memory_dir: Path) -> dict[str, bytes]:
    """The memory files as bytes (the index left aside: undo rebuilds it)."""
    return {name: data for name, data in snapshot(memory_dir).items() if name != "MEMORY.md"}


GAMMA = memory_text("gamma", "gamma facts", body="C.\n")
SHARPER = {"name": "gamma", "description": "gamma facts, sharper", "body": "C, said better.\n"}


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    return project_memory_dir(str(project_dir))


@pytest.mark.parametrize("create_first", [True, False], ids=["create listed first", "change listed first"])
def test_a_change_keeps_its_memorys_name_and_the_create_under_it_is_refused(
    api_env: FakeAnthropic, memory_dir: Path, create_first: bool
) -> None:
    store = seed(memory_dir, {"project_c.md": GAMMA})
    creating = create("a duplicate of gamma", name="Gamma", description="another gamma")
    changing = change("project_c.md", "sharper", **SHARPER)
    api_env.plain_replies.append(read_answer("project_c.md"))
    api_env.plain_replies.append(
        changes_answer(*([creating, changing] if create_first else [changing, creating]))
    )

    proposal = TidyReview(store, model(api_env)).propose()

    assert [(c.action, c.file_name) for c in proposal.changes] == [("change", "project_c.md")]
    assert any("a memory named 'Gamma' exists (project_c.md)" in line for line in proposal.dropped)
    result = apply_tidy(store, proposal.changes)  # what --yes applies
    assert result.skipped == [] and without_provenance(
        (memory_dir / "project_c.md").read_text()
    ) == memory_text(**SHARPER)


def test_a_renamed_memory_frees_its_name_for_a_new_one(api_env: FakeAnthropic, memory_dir: Path) -> None:
    store = seed(memory_dir, {"project_c.md": GAMMA})
    api_env.plain_replies.append(read_answer("project_c.md"))
    api_env.plain_replies.append(
        changes_answer(
            create("split out", name="gamma", description="what gamma was"),
            change("project_c.md", "renamed", name="gamma archive", description="old gamma facts"),
        )
    )
    proposal = TidyReview(store, model(api_env)).propose()
    assert sorted(c.action for c in proposal.changes) == ["change", "create"] and proposal.dropped == []


def tidied(api_env: FakeAnthropic, memory_dir: Path) -> MemoryStore:
    """Five memories, then a tidy that changes a and c, deletes b and x, and creates n."""
    store = seed(
        memory_dir,
        {f"project_{n}.md": memory_text(f"mem {n}", f"facts about {n}") for n in "abcd"}
        | {"project_x.md": memory_text("x", "facts about x")},
    )
    api_env.plain_replies.append(read_answer("project_a.md", "project_b.md", "project_c.md", "project_x.md"))
    api_env.plain_replies.append(
        changes_answer(
            change("project_a.md", name="mem a", description="tidy a"),
            delete("project_b.md"),
            create(name="new n", description="tidy n"),
            change("project_c.md", name="mem c", description="tidy c"),
            delete("project_x.md"),
        )
    )
    result = apply_tidy(store, TidyReview(store, model(api_env)).propose().changes)
    assert len(result.applied) == 5
    return store


def test_undo_skips_every_file_changed_or_deleted_since_and_names_each_once(
    api_env: FakeAnthropic, memory_dir: Path
) -> None:
    store = tidied(api_env, memory_dir)
    (memory_dir / "project_a.md").write_text(memory_text("mem a", "edited by hand"))  # changed since
    (memory_dir / "project_b.md").write_text(memory_text("mem b", "written again"))  # deleted one, back
    (memory_dir / "project_new_n.md").unlink()  # the created one, deleted by hand
    (memory_dir / "project_c.md").unlink()  # a changed one, deleted by hand
    (memory_dir / "feedback_x.md").write_text(memory_text("X", "x saved again", "feedback"))  # x's name
    after_hand = memories(memory_dir)

    reverted = undo_last(store)
    restored, left = reverted.restored, reverted.left

    assert restored == [] and len(left) == 5, left
    lines = {line.split(" ", 1)[0].rstrip(","): line for line in left}
    assert "edited since the tidy: not overwritten" in lines["project_a.md"]
    assert "exists again: not overwritten" in lines["project_b.md"]
    assert "deleted since: nothing to remove" in lines["project_new_n.md"]
    assert "deleted since the tidy: not brought back" in lines["project_c.md"]
    assert "not restored: a memory named 'x' exists now (feedback_x.md)" in lines["project_x.md"]
    assert all("before/" in lines[name] for name in ("project_a.md", "project_c.md", "project_x.md"))
    assert memories(memory_dir) == after_hand  # nothing came back, nothing was overwritten
    assert [m.name for m in store.scan()].count("X") == 1


def test_undo_of_a_swap_of_names_puts_both_back(api_env: FakeAnthropic, memory_dir: Path) -> None:
    before = {"project_a.md": memory_text("alpha", "a"), "project_b.md": memory_text("beta", "b")}
    store = seed(memory_dir, before)
    api_env.plain_replies.append(read_answer("project_a.md", "project_b.md"))
    api_env.plain_replies.append(
        changes_answer(
            change("project_a.md", name="beta", description="a"),
            change("project_b.md", name="alpha", description="b"),
        )
    )
    assert len(apply_tidy(store, TidyReview(store, model(api_env)).propose().changes).applied) == 2

    reverted = undo_last(store)
    restored, left = reverted.restored, reverted.left

    assert left == [] and sorted(restored) == ["restored project_a.md", "restored project_b.md"]
    assert memories(memory_dir) == {name: text.encode() for name, text in before.items()}


def test_memory_undo_from_the_shell_lists_what_it_left(
    api_env: FakeAnthropic, project_dir: Path, memory_dir: Path
) -> None:
    tidied(api_env, memory_dir)
    (memory_dir / "project_c.md").unlink()

    result = Cli(project_dir).run("memory", "undo")

    assert result.returncode == 0, result.stderr
    assert (
        "Left as they are (1):\n  project_c.md was deleted since the tidy: not brought back" in result.stdout
    )
    assert not (memory_dir / "project_c.md").exists() and (memory_dir / "project_b.md").exists()
