"""The `{{memory}}` section of the system prompt: how to use memory, then the index of every scope.

The index is made from the memories' headers (never from a MEMORY.md found on disk, which anyone
can write), each line escaped and folded (store/index.py), each scope's lines wrapped as data in a
tag they cannot close; an expired memory and one hidden by a narrower one of its name are left out.
"""

from __future__ import annotations

import time

from mini_claude.core import prompts
from mini_claude.core.untrusted import attribute, wrap
from mini_claude.memory.scopes import MemoryScopes
from mini_claude.memory.staleness import expired
from mini_claude.memory.store.index import (
    INDEX_TAG,
    PROMPT_INDEX_MAX_BYTES,
    PROMPT_INDEX_MAX_LINES,
    index_line,
)
from mini_claude.memory.store.memory_store import MemoryStore

SCOPE_TITLES = {
    "project": "This project's memories",
    "team": "Team memories (in the repository, shared with everyone working on it)",
    "user": "Your memories about the user (every project)",
}


def memory_section(memories: MemoryScopes | MemoryStore, now: float | None = None) -> str:
    scopes = MemoryScopes.of(memories)
    index = _index(scopes, time.time() if now is None else now)
    user = scopes.user.root if scopes.user is not None else None
    team = scopes.team.root if scopes.team is not None and scopes.team_loaded() else None
    return prompts.render(
        "memory.md",
        memory_dir=attribute(str(scopes.project.root)),
        user_memory_dir=attribute(str(user)) if user else "(none)",
        team_memory=prompts.render("memory_team.md", team_memory_dir=attribute(str(team))) if team else "",
        index=index,
    )


def memory_index(memories: MemoryScopes | MemoryStore, now: float | None = None) -> str:
    """The index alone, without the guidance on saving: for a sub-agent, which reads memories
    (read_file in the memory folders) but never writes them."""
    scopes = MemoryScopes.of(memories)
    index = _index(scopes, time.time() if now is None else now)
    return prompts.render("subagent_memory.md", memory_dir=attribute(str(scopes.project.root)), index=index)


def _index(scopes: MemoryScopes, now: float) -> str:
    """Each scope's lines in a tag of its own, narrowest first, within PROMPT_INDEX_MAX_LINES and
    PROMPT_INDEX_MAX_BYTES in all (the narrower scopes' lines kept first); a notice when empty."""
    usable = [memory for memory in scopes.usable() if not expired(memory, now)]
    lines_left, bytes_left, parts, shown = PROMPT_INDEX_MAX_LINES, PROMPT_INDEX_MAX_BYTES, [], 0
    for store in scopes.stores():
        lines = [index_line(m) for m in usable if m.scope == store.scope]
        kept = []
        for line in lines[: max(0, lines_left)]:
            size = len(line.encode("utf-8")) + 1
            if size > bytes_left:
                break
            kept.append(line)
            bytes_left -= size
        lines_left -= len(kept)
        shown += len(kept)
        if kept:
            text = "\n".join(kept)  # wrap neutralises the tag and any <system-reminder> in it
            parts.append(f"{SCOPE_TITLES[store.scope]}:\n" + wrap(INDEX_TAG, text, folder=str(store.root)))
    if shown < len(usable):
        parts.append(
            prompts.notice(
                "memory_index_truncated",
                shown=shown,
                total=len(usable),
                max_lines=PROMPT_INDEX_MAX_LINES,
                max_bytes=PROMPT_INDEX_MAX_BYTES,
            )
        )
    return "\n\n".join(parts) or prompts.notice("memory_index_empty")
