"""The `{{memory}}` section of the system prompt: how to use memory, then the current index."""

from __future__ import annotations

from mini_claude import prompts
from mini_claude.memory.index import index_for_prompt, render_index
from mini_claude.memory.naming import INDEX_FILE
from mini_claude.memory.store import MemoryStore
from mini_claude.untrusted import wrap

NO_MEMORIES = "(No memories saved yet.)"


def memory_section(store: MemoryStore) -> str:
    try:
        index_text = (store.root / INDEX_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        index_text = (
            render_index([m for m in store.scan() if m.problem is None]) if store.has_memories() else ""
        )
    has_entries = any(line.startswith("- ") for line in index_text.splitlines())
    index = wrap("memory-index", index_for_prompt(index_text)) if has_entries else NO_MEMORIES
    return prompts.render("memory.md", memory_dir=str(store.root), index=index)
