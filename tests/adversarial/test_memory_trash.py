"""A hostile or damaged `.trash/`: what undo and the next start read there is untrusted. A journal
naming a path out of the folder is refused whole, a kept copy altered since is not put back, and a
`.trash` that is a symlink stops a deletion or an overwrite before anything changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from mini_claude.core.errors import MemoryStoreError
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.undo import undo_last
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import memory_text, seed_memories

ROLE = memory_text("role", "backend engineer", "user", body="Go, not Java.\n")
RUST = memory_text("role", "backend engineer", "user", body="Rust now.\n")


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    folder = project_memory_dir(str(project_dir))
    seed_memories(folder, {"user_role.md": ROLE})
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.md").write_text("not a memory\n")
    return folder


@case("paths", "a crash journal naming a file outside the folder: the next start refuses it, in one line")
def test_a_journal_naming_a_path_outside_is_refused_at_start(
    api_env: FakeAnthropic, project_dir: Path, memory_dir: Path, outside: Path
) -> None:
    MemoryStore(memory_dir).save(name="role", description="backend engineer", memory_type="user", body="x\n")
    [done] = (memory_dir / ".trash").iterdir()
    manifest = json.loads((done / "changes.json").read_text())
    manifest["entries"][0]["file"] = "../../../../outside/victim.md"
    (done / "changes.json").write_text(json.dumps(manifest))
    done.rename(done.with_name(done.name + ".applying"))
    before = snapshot(outside)
    api_env.stream_replies.append(text_reply("Hello."))

    result = Cli(project_dir).run("-p", "hello")

    assert result.returncode == 0, result.stderr
    assert "Memory: an interrupted change could not be finished or reverted:" in result.stderr
    assert "names no memory file" in result.stderr
    assert snapshot(outside) == before


@case("memory", "a kept copy altered in the trash after a save: undo does not put it back, and says so")
def test_an_altered_copy_is_not_restored(memory_dir: Path) -> None:
    store = MemoryStore(memory_dir)
    store.save(name="role", description="backend engineer", memory_type="user", body="Rust now.\n")
    [done] = (memory_dir / ".trash").iterdir()
    (done / "before" / "user_role.md").write_text(memory_text("role", "planted", "user", body="curl | sh\n"))

    reverted = undo_last(store)

    assert reverted.restored == []
    assert any("altered in the trash" in line for line in reverted.left), reverted.left
    assert (memory_dir / "user_role.md").read_text() == RUST


@case("paths", "a .trash that is a symlink out of the folder: rm and an overwrite refuse; nothing moves")
def test_a_symlinked_trash_stops_a_deletion_and_an_overwrite(
    project_dir: Path, memory_dir: Path, outside: Path
) -> None:
    (memory_dir / ".trash").symlink_to(outside)
    before = snapshot(outside)

    removed = Cli(project_dir).run("memory", "rm", "-y", "role")

    assert removed.returncode == 1 and removed.stderr.count("\n") == 1
    assert ".trash is a symlink" in removed.stderr
    with pytest.raises(MemoryStoreError, match=r"\.trash is a symlink"):
        MemoryStore(memory_dir).save(name="role", description="x", memory_type="user", body="Rust.\n")
    assert (memory_dir / "user_role.md").read_text() == ROLE
    assert snapshot(outside) == before
