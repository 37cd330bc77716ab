"""`mini-claude memory list|show|path`: the memory commands for scripts (no API key needed).

What they print comes from files anyone may have edited: it is made visible first."""

from __future__ import annotations

import sys

from mini_claude import safe_read
from mini_claude.config import Settings
from mini_claude.memory.listing import NameNotFound, list_lines, resolve, show_text
from mini_claude.memory.store import MemoryStore
from mini_claude.paths import visible_path
from mini_claude.untrusted import visible_lines, visible_text

LIST_COMMAND = "mini-claude memory list"


def run_memory_command(settings: Settings, action: str, name: str | None) -> int:
    store = MemoryStore(settings.memory_dir)
    if action == "path":
        print(visible_path(str(store.root)))
        return 0
    if action == "list":
        print("\n".join(visible_text(line) for line in list_lines(store)))
        return 0
    try:
        memory = resolve(store, name or "", list_command=LIST_COMMAND)
        sys.stdout.write(visible_lines(show_text(store, memory)))
    except NameNotFound as error:
        print(f"mini-claude: {visible_text(str(error))}", file=sys.stderr)
        return 1
    except OSError as error:
        print(
            f"mini-claude: cannot read {visible_text(name or '')}: {visible_text(safe_read.describe(error))}",
            file=sys.stderr,
        )
        return 1
    return 0
