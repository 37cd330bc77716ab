"""Memory scopes: one interface over the folders memories are kept in, so the index, recall, the
listing and undo see one list with a scope on each memory.

- `project`: `~/.mini-claude/projects/<hash>/memory/`, yours, for this project (today's memories);
- `team`: `.mini-claude/memory/` at the project's root, in the repository: it travels with git to
  teammates. Text from the repository, so loaded only in a folder the user trusts;
- `user`: `~/.mini-claude/memory/`, yours, in every project.

Two memories of one name in two scopes: the narrower (SCOPES' order) wins, the other is hidden
from the index and recall, and `/memory` says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.config import Settings, git_work_tree_root, memory_project_root
from mini_claude.core.files import safe_read
from mini_claude.core.paths import is_within, visible_path
from mini_claude.memory.recall.history import RecallHistory
from mini_claude.memory.store.headers import stat_memory_files
from mini_claude.memory.store.memory_file import SCOPES, MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import name_key

# How each scope is named to people: in a sentence, and in a few words (a listing's brackets).
SCOPE_NAMES = {
    "project": "this project's memories",
    "team": "the team's memories",
    "user": "your memories (every project)",
}
SCOPE_WORDS = {"project": "this project", "team": "team", "user": "yours"}


class MemoryScopes:
    """The stores of a session, narrowest first; `team` is used only when `team_trusted`."""

    def __init__(
        self,
        project: MemoryStore,
        *,
        user: MemoryStore | None = None,
        team: MemoryStore | None = None,
        team_trusted: bool = False,
        project_root: Path | None = None,
    ) -> None:
        self.project, self.user, self.team = project, user, team
        self.team_trusted = team_trusted
        self.project_root = project_root  # the repository's root: team memories must lie within it
        # A change set kept in the project's trash may change the user's and the team's folders
        # too (a memory moved between them); one in the user's, only the user's (it is shared
        # by every project, each of which has its own team and project).
        for store in (user, team):
            if store is not None:
                project.peers[store.scope] = store.root

    @classmethod
    def for_settings(cls, settings: Settings) -> MemoryScopes:
        """The memory folders of a session in `settings.project_dir`: the project's, the user's
        own, and the team's in the repository (used only in a trusted folder, `folder_trusted`).
        Outside a git repository there is no team's; nor where its folder would be another
        scope's (a repository in the home folder holds `~/.mini-claude/memory`, the user's)."""
        root = memory_project_root(settings.project_dir)
        folders = {os.path.realpath(settings.memory_dir), os.path.realpath(settings.user_memory_dir)}
        has_team = (
            git_work_tree_root(root) == root and os.path.realpath(settings.team_memory_dir) not in folders
        )
        return cls(
            MemoryStore(settings.memory_dir, "project"),
            user=MemoryStore(settings.user_memory_dir, "user"),
            team=MemoryStore(settings.team_memory_dir, "team") if has_team else None,
            team_trusted=settings.folder_trusted,
            project_root=root,
        )

    @classmethod
    def of(cls, memories: MemoryScopes | MemoryStore) -> MemoryScopes:
        """`memories` as scopes: a lone store (a tool, a test) is a project without the others."""
        return memories if isinstance(memories, MemoryScopes) else cls(memories)

    def stores(self) -> list[MemoryStore]:
        """The stores whose memories are used, narrowest first."""
        return [
            store
            for scope in SCOPES
            if (store := self.store(scope)) is not None
            and (scope != "team" or self.team_loaded())
            and store.root_problem() is None
        ]

    def store(self, scope: str) -> MemoryStore | None:
        return {"project": self.project, "team": self.team, "user": self.user}.get(scope)

    def team_loaded(self) -> bool:
        return self.team is not None and self.team_trusted and self.team_problem() is None

    def unloaded_team_memories(self) -> int:
        """Team memory files there are but are not used because the folder is not trusted."""
        if self.team is None or self.team_trusted or self.team_problem() is not None:
            return 0
        return len(stat_memory_files(self.team.root))

    def team_problem(self) -> str | None:
        """Why the team's folder is not used, trusted or not, or None: it leads out of the
        repository (a symlink to `~/.ssh`), or it or a folder on its way there belongs to someone
        else (who could swap its memories), as for mini-claude's own folders."""
        assert self.team is not None
        real = Path(os.path.realpath(self.team.root))
        root = Path(os.path.realpath(self.project_root)) if self.project_root is not None else None
        if root is not None and not is_within(real, root):
            return prompts.notice("memory_team_outside", folder=visible_path(str(self.team.root)))
        for level in (real, *real.parents):
            if root is None or level == root:
                break
            try:
                info = os.stat(level)
            except OSError:
                continue  # not there (yet): nothing of it is read
            if (problem := safe_read.owner_problem(level, info)) is not None:
                return prompts.notice("memory_team_foreign", reason=problem)
        return None

    # -- the memories ---------------------------------------------------------------------------

    def scan(self) -> list[MemoryFile]:
        """Every memory of every scope used, broken ones included: by scope, newest first in each."""
        return [memory for store in self.stores() for memory in store.scan()]

    def has_memories(self) -> bool:
        return any(store.has_memories() for store in self.stores())

    def shadowed(self, memories: Sequence[MemoryFile]) -> dict[str, MemoryFile]:
        """Key of each memory hidden by a narrower one of the same name → that one."""
        winner: dict[str, MemoryFile] = {}
        hidden: dict[str, MemoryFile] = {}
        for memory in sorted(_usable(memories), key=lambda m: SCOPES.index(m.scope)):
            held = winner.setdefault(name_key(memory.name), memory)
            if held.scope != memory.scope:
                hidden[memory.key] = held
        return hidden

    def usable(self, memories: Sequence[MemoryFile] | None = None) -> list[MemoryFile]:
        """The memories the index and recall use: not broken, not hidden by a narrower one."""
        memories = self.scan() if memories is None else memories
        hidden = self.shadowed(memories)
        return [memory for memory in _usable(memories) if memory.key not in hidden]

    def find(self, query: str) -> list[MemoryFile]:
        """Memories of every scope whose name or file name matches `query` (as MemoryStore.find),
        or whose key does (`user/feedback_x.md`); the narrowest scope's first."""
        scope, _, file_name = query.strip().partition("/")
        if file_name and (store := self.store(scope)) is not None and store in self.stores():
            return store.find(file_name)
        return [memory for store in self.stores() for memory in store.find(query)]

    def store_of(self, memory: MemoryFile) -> MemoryStore:
        store = self.store(memory.scope)
        assert store is not None, memory.scope
        return store

    def owner(self, path: Path) -> MemoryStore | None:
        """The store whose folder holds the resolved `path` (the team's even while not loaded)."""
        return next((s for s in (self.project, self.team, self.user) if s is not None and s.owns(path)), None)

    def record_recalled(self, keys: Iterable[str]) -> None:
        """Count, in each folder's recall history, the memories that reached a conversation. The
        team's is not kept: it would be a file in the repository."""
        by_scope: dict[str, list[str]] = {}
        for key in keys:
            scope, _, file_name = key.rpartition("/")
            by_scope.setdefault(scope or "project", []).append(file_name)
        for scope, names in by_scope.items():
            store = self.store(scope)
            if store is not None and scope != "team":
                RecallHistory(store.root).record_in_background(names)


def _usable(memories: Iterable[MemoryFile]) -> list[MemoryFile]:
    return [memory for memory in memories if memory.problem is None]
