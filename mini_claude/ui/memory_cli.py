"""`mini-claude memory list|show|path`: the memory commands for scripts (no API key needed)."""

from __future__ import annotations

import sys

from mini_claude.config import Settings
from mini_claude.memory.listing import NameNotFound, list_lines, resolve, show_text
from mini_claude.memory.store import MemoryStore

LIST_COMMAND = "mini-claude memory list"


def run_memory_command(settings: Settings, action: str, name: str | None) -> int:
    store = MemoryStore(settings.memory_dir)
    if action == "path":
        print(store.root)
        return 0
    if action == "list":
        print("\n".join(list_lines(store)))
        return 0
    try:
        memory = resolve(store, name or "", list_command=LIST_COMMAND)
        sys.stdout.write(show_text(store, memory))
    except NameNotFound as error:
        print(f"mini-claude: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"mini-claude: cannot read {name}: {error.strerror}", file=sys.stderr)
        return 1
    return 0
