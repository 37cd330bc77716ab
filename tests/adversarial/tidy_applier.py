"""A process that applies tidies to the memory folder until it is killed, for the crash tests.

    python tidy_applier.py MEMORY_DIR READY_FILE

Each round is one tidy, reviewed and accepted as `mini-claude memory tidy --yes` would apply it,
that rewrites every `project_fact_*.md`: version A becomes B and B becomes A, so a tidy stopped
part-way leaves some of each. READY_FILE appears after the first round.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.tidy.apply import apply_tidy
from mini_claude.memory.tidy.proposal import FileChange, read_memory


def fact(number: int, version: str) -> str:
    return (
        f"---\nname: fact {number}\ndescription: fact {number}, version {version}\ntype: project\n---\n"
        f"Version {version} of fact {number}.\n"
    )


def main() -> None:
    folder, ready = Path(sys.argv[1]), Path(sys.argv[2])
    store = MemoryStore(folder)
    for round_number in itertools.count():
        changes = []
        for path in sorted(folder.glob("project_fact_*.md")):
            old = read_memory(store, path.name)
            number = int(path.stem.rsplit("_", 1)[1])
            new = fact(number, "B" if "version A" in old.text else "A")
            changes.append(FileChange("change", path.name, f"fact {number}", "flip", new, old))
        applied = apply_tidy(store, changes)
        assert not applied.skipped, applied.skipped
        if round_number == 0:
            ready.touch()


if __name__ == "__main__":
    main()
