"""One memory as its header describes it: what the store lists, the index shows and recall offers.

A leaf (it imports nothing of ours), so every memory module can name it without importing the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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
