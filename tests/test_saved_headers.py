"""`mini-claude memory list` keeps the headers it parsed in `.header-cache.json`, so the next list
over thousands of memories reads one file: it must still show every change made since, however
it was made, and a cache that is damaged, planted or led out of the folder changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from mini_claude.memory.store.saved_headers import HEADERS_FILE
from tests.cli_harness import Cli


def memory_file(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: project\n---\nBody.\n"


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    folder = project_memory_dir(str(project_dir))
    folder.mkdir(parents=True)
    (folder / "project_deploys.md").write_text(memory_file("deploys", "fridays only"))
    (folder / "project_schema.md").write_text(memory_file("schema", "migrations in db/"))
    return folder


def listed(project_dir: Path) -> str:
    result = Cli(project_dir).run("memory", "list")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_second_list_reads_the_saved_headers_and_shows_the_same(
    project_dir: Path, memory_dir: Path
) -> None:
    first = listed(project_dir)
    cache = memory_dir / HEADERS_FILE
    assert cache.is_file() and os.stat(cache).st_mode & 0o077 == 0
    # The saved header is what a second list shows: a planted entry for an unchanged file proves it.
    cache.write_text(cache.read_text().replace("fridays only", "saved, not parsed"))

    second = listed(project_dir)

    assert "deploys — saved, not parsed" in second
    assert second.replace("saved, not parsed", "fridays only") == first


def test_an_edit_that_keeps_the_mtime_and_the_size_is_still_seen(project_dir: Path, memory_dir: Path) -> None:
    listed(project_dir)
    path = memory_dir / "project_deploys.md"
    before = os.stat(path)
    path.write_text(memory_file("deploys", "mondays only"))  # as long as "fridays only"
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size

    assert "deploys — mondays only" in listed(project_dir)


def test_new_and_deleted_memories_are_seen(project_dir: Path, memory_dir: Path) -> None:
    listed(project_dir)
    (memory_dir / "project_schema.md").unlink()
    (memory_dir / "project_ci.md").write_text(memory_file("ci", "runs on every push"))

    shown = listed(project_dir)

    assert "ci — runs on every push" in shown and "schema" not in shown
    assert "schema" not in (memory_dir / HEADERS_FILE).read_text()


@pytest.mark.parametrize(
    "damage",
    ["", "not json", '{"format": 2, "headers": [["project_deploys.md", 1]]}', '{"format": 99, "headers": []}',
     '{"format": 2, "headers": [["project_deploys.md", 0, 0, 0, 0, 1, "", "", null, [], "", "", [], "", 0]]}',
     "\x00" * 100],
    ids=["empty", "not_json", "short_row", "other_format", "wrong_types", "nul_bytes"],
)  # fmt: skip
def test_a_damaged_cache_is_ignored_and_written_again(
    project_dir: Path, memory_dir: Path, damage: str
) -> None:
    first = listed(project_dir)
    (memory_dir / HEADERS_FILE).write_text(damage)

    assert listed(project_dir) == first
    assert '"format":2' in (memory_dir / HEADERS_FILE).read_text()


def test_a_cache_that_is_a_symlink_is_not_read_nor_written_through(
    project_dir: Path, memory_dir: Path, tmp_path: Path
) -> None:
    first = listed(project_dir)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text((memory_dir / HEADERS_FILE).read_text().replace("fridays only", "from outside"))
    (memory_dir / HEADERS_FILE).unlink()
    (memory_dir / HEADERS_FILE).symlink_to(elsewhere)
    (memory_dir / "project_ci.md").write_text(memory_file("ci", "runs on every push"))

    shown = listed(project_dir)

    assert "from outside" not in shown and "deploys — fridays only" in shown and first != shown
    assert "from outside" in elsewhere.read_text() and "runs on every push" not in elsewhere.read_text()
    assert not (memory_dir / HEADERS_FILE).is_symlink()


def test_a_symlinked_memory_is_judged_again_each_time(
    project_dir: Path, memory_dir: Path, tmp_path: Path
) -> None:
    inside = memory_dir / "project_kept.md"
    inside.write_text(memory_file("kept", "a memory inside"))
    outside = tmp_path / "outside.md"
    outside.write_text(memory_file("outside", "must not be read"))
    link = memory_dir / "project_link.md"
    link.symlink_to(inside)
    listed(project_dir)
    link.unlink()
    link.symlink_to(outside)

    shown = listed(project_dir)

    assert "must not be read" not in shown and "symlink pointing outside" in shown
