"""A process that saves memories through the memory writer until it is killed, for the crash tests.

    python memory_saver.py MEMORY_DIR READY_FILE BODY_BYTES

Each round rewrites `project_big.md` with a large body of all "A" or all "B" (alternating) and adds
one small memory, so the index is rewritten every round too. READY_FILE appears after the first round.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.tools.memory_writer import MemoryStoreWriter

BIG_FILE = "project_big.md"


def big_memory(letter: str, size: int) -> str:
    return f"---\nname: big\ndescription: a large memory\ntype: project\n---\n{letter * size}\nEND\n"


def small_memory(number: int) -> str:
    return f"---\nname: fact {number}\ndescription: small fact {number}\ntype: project\n---\nFact {number}.\n"


def main() -> None:
    folder, ready, size = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    memory_writer = MemoryStoreWriter(MemoryStore(folder))
    for number in itertools.count():
        memory_writer.save(folder / BIG_FILE, big_memory("AB"[number % 2], size), edit=False)
        memory_writer.save(folder / f"project_fact_{number}.md", small_memory(number), edit=False)
        if number == 0:
            ready.touch()


if __name__ == "__main__":
    main()
