"""Two writers saving memories into one folder at the same moment: what must be found afterwards.

Shared by the store-level test (two processes calling MemoryStore.save) and the whole-program one
(two REPLs whose model asks for the saves), which prove the same promise at different depths."""

from __future__ import annotations

import re
from pathlib import Path

from mini_claude.memory.store.memory_store import MemoryStore

SAVES_PER_WRITER = 100
INDEX_LINE = re.compile(r"- \*\*\[(.*)\]\((.*)\)\*\* \((user|feedback|project|reference)\) — (.*)")


def assert_every_save_kept(folder: Path, descriptions: list[str]) -> None:
    """One well-formed memory per save (`descriptions`: what each saved), each listed exactly once
    by a whole, well-formed MEMORY.md, and no temp file left behind."""
    memories = MemoryStore(folder).scan()
    assert [(m.file_name, m.problem) for m in memories if m.problem is not None] == []
    assert sorted(m.description for m in memories) == sorted(descriptions)
    title, *lines = (folder / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    assert title == "# Memory index"
    targets = []
    for line in lines:
        entry = INDEX_LINE.fullmatch(line)
        assert entry, line
        targets.append(entry[2])
    assert sorted(targets) == sorted(m.file_name for m in memories)
    assert [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == []
