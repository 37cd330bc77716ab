"""`@path` imports in instruction files, as Claude Code reads them: relative to the importing file,
`~/…` or absolute; not inside code spans or fenced blocks; a word that names nothing (`@alice`,
`@dataclass`) stays text. Each imported file follows the one that imports it, read by the same
rules as an import (reading.py), up to IMPORT_MAX_DEPTH levels deep, each file once (so a cycle
stops where it closes)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.app.instructions.reading import (
    Chosen,
    FileText,
    NotRead,
    Places,
    read_instruction,
    shown_path,
)
from mini_claude.app.mentions import find_mentions
from mini_claude.core.files import safe_read
from mini_claude.core.paths import written_path

IMPORT_MAX_DEPTH = 5  # hops from a file the hierarchy reads, as Claude Code allows
IMPORT_MAX_FILES = 50  # imported files in one conversation's instructions


@dataclass(frozen=True)
class Instruction:
    path: Path  # as found
    scope: str  # "user", "project", "local", "folder" (a sub-folder's, given as a reminder)
    text: str
    size: int  # the file's size in bytes
    cut: bool = False  # longer than reading.INSTRUCTION_FILE_MAX_BYTES: only its start is here
    imported_by: Path | None = None
    kind: str = "file"  # "file", "rule" (from a rules folder), "import"


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str  # one line naming the file


@dataclass
class Gathered:
    """What one reading of the instructions has found so far: files in order, skipped files with
    why, and every real path read (a file reached twice, by a cycle or two names, is read once)."""

    found: list[Instruction] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    decoding: list[str] = field(default_factory=list)  # files read, but not as plain UTF-8: one line each
    seen: set[Path] = field(default_factory=set)
    imported: int = 0

    def first_time(self, path: Path) -> bool:
        real = Path(os.path.realpath(path))
        if real in self.seen:
            return False
        self.seen.add(real)
        return True

    def read(self, path: Path, places: Places, chosen: Chosen) -> FileText | None:
        """The file's text, or None: not there (said nowhere), already read, or skipped (said)."""
        try:
            if not os.path.lexists(path) or not self.first_time(path):
                return None
            found = read_instruction(path, places, chosen)
        except FileNotFoundError:
            return None
        except NotRead as refused:
            self.skipped.append(Skipped(path, str(refused)))
            return None
        except OSError as error:  # a link swapped for a file while it was resolved: never a crash
            self.skipped.append(Skipped(path, f"{path.name} not read: {safe_read.describe(error)}"))
            return None
        if found.warning is not None:
            self.decoding.append(found.warning)
        return found


def add_with_imports(
    gathered: Gathered, file: FileText, text: str, scope: str, places: Places, *, kind: str = "file"
) -> None:
    """`file` (its instructions being `text`), then what it imports, depth first."""
    gathered.found.append(Instruction(file.path, scope, text, file.size, file.cut, kind=kind))
    _add_imports(gathered, file.path, text, scope, places, depth=1)


def _add_imports(
    gathered: Gathered, importer: Path, text: str, scope: str, places: Places, depth: int
) -> None:
    folder = importer.parent
    for written in find_mentions(text, folder):
        path = Path(os.path.normpath(written_path(written, folder)))
        if os.path.isdir(path):
            continue  # `@src/` names a folder for the reader, not a file to import
        if depth > IMPORT_MAX_DEPTH:
            reason = f"imported more than {IMPORT_MAX_DEPTH} levels deep (by {shown_path(importer)})"
            gathered.skipped.append(Skipped(path, f"{path.name} not read: {shown_path(path)}: {reason}"))
            continue
        if gathered.imported >= IMPORT_MAX_FILES:
            reason = f"the instructions import more than {IMPORT_MAX_FILES} files"
            gathered.skipped.append(Skipped(path, f"{path.name} not read: {shown_path(path)}: {reason}"))
            return
        imported = gathered.read(path, places, "import")
        if imported is None:
            continue
        gathered.imported += 1
        gathered.found.append(
            Instruction(path, scope, imported.text, imported.size, imported.cut, importer, "import")
        )
        _add_imports(gathered, path, imported.text, scope, places, depth + 1)
