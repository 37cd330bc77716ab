"""One memory as its header describes it: what the store lists, the index shows and recall offers.

A leaf (it imports nothing of ours), so every memory module can name it without importing the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# The folders memories are kept in, narrowest first: where two hold a memory of one name, the
# first wins. `project`: yours, for this project; `team`: in the repository, for everyone working
# on it; `user`: yours, in every project.
SCOPES = ("project", "team", "user")


@dataclass(frozen=True)
class MemoryFile:
    """One memory as its header describes it (the body is read only when needed)."""

    file_name: str
    path: Path
    name: str
    description: str
    type: str
    mtime: float
    size: int
    problem: str | None = None  # set when the file is broken: it stays on disk but out of the index
    warnings: tuple[str, ...] = ()
    scope: str = "project"  # one of SCOPES: which folder it is in
    source: str = ""  # who wrote it (`source:`): user, model, tidy, import; "" when it does not say
    updated: str = ""  # `updated:` as written (provenance.py reads it)
    paths: tuple[str, ...] = ()  # the files it is about (`paths:`)
    expires: str = ""  # `expires:` as written: a date, or a condition in words
    plain: bool = False  # a hand-written file without frontmatter (name, description, type derived)

    @property
    def key(self) -> str:
        """What names it among the memories of every scope: the file name, `user/…` or `team/…`."""
        return self.file_name if self.scope == "project" else f"{self.scope}/{self.file_name}"
