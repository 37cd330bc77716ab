"""The `{{memory}}` section of the system prompt: how to use memory, then the current index."""

from __future__ import annotations

from mini_claude.core import prompts
from mini_claude.core.files import safe_read
from mini_claude.core.untrusted import attribute, wrap
from mini_claude.memory.store.index import index_for_prompt, render_index
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import INDEX_FILE

# Read of MEMORY.md for the prompt (which shows far less: see index_for_prompt); ~20,000 entries.
INDEX_READ_MAX_BYTES = 4 * 1024 * 1024


def memory_section(store: MemoryStore) -> str:
    index_text = ""
    if store.root_problem() is None:  # a memory folder pointing elsewhere is not read (start-up said so)
        try:
            index_text = safe_read.read_text(
                store.root / INDEX_FILE,
                store.root,
                INDEX_READ_MAX_BYTES,
                follow_symlink=False,
                owner_only=True,
            ).text
        except OSError:  # missing, not a regular file of ours (start-up replaces or reports it)
            good = [m for m in store.scan() if m.problem is None] if store.has_memories() else []
            index_text = render_index(good)
    if any(line.startswith("- ") for line in index_text.splitlines()):
        index = wrap("memory-index", index_for_prompt(index_text))
    else:
        index = prompts.notice("memory_index_empty")
    return prompts.render("memory.md", memory_dir=attribute(str(store.root)), index=index)
