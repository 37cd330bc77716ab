"""Reading one instruction file (a CLAUDE.md, a rule, an import) as every start-up file is read:
a regular file (never a FIFO or a device), at most INSTRUCTION_FILE_MAX_BYTES of it, symlinks
resolved and judged by where they lead; decoded as every text file is (core/files/text_decoding.py: a
BOM honoured, text that is not UTF-8 read with a warning, binary-looking data skipped with one).

Where a file may come from depends on who chose it. The hierarchy's own files sit where the user
or the project put them: only a symlink's target is judged. An import is named by a file's text,
which a cloned repository controls: it is read only from the project or home's non-dot files (or
as Markdown from ~/.claude and ~/.mini-claude), never when it looks like a secret.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mini_claude.core.config import app_home
from mini_claude.core.files import safe_read
from mini_claude.core.files.private_files import foreign_entry, private_place
from mini_claude.core.files.text_decoding import decode_text
from mini_claude.core.paths import is_within, visible_path
from mini_claude.safety.protections import PRIVATE_KEY_MARK, private_reason

INSTRUCTION_FILE_MAX_BYTES = 40_000  # each file; the total is capped in hierarchy.py
# File names that hold keys and passwords: never instructions, whoever names them.
SECRET_NAMES = (
    ".env", ".env.*", "*.env", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.pem", "*.key",
    "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", ".netrc", "_netrc", ".pgpass", ".npmrc",
    ".pypirc", "credentials", "credentials.*", ".git-credentials", "*.gpg", "*.asc",
)  # fmt: skip
SECRET_REASON = "its name says it holds a secret"
GIT_FOLDER = ".git"
INSTRUCTION_HOMES = (".claude", ".mini-claude")  # in home: their Markdown files may be imported
STATE_FOLDER = "projects"  # in those: other projects' memories and transcripts, never imported

Chosen = Literal["user", "project", "import"]  # who put the file where it is (see the module doc)


class NotRead(Exception):
    """Why an instruction file that exists was not read, in one line naming it."""


@dataclass(frozen=True)
class FileText:
    path: Path  # as found (absolute, symlinks not resolved)
    text: str
    size: int  # the whole file's size in bytes
    cut: bool  # only the first INSTRUCTION_FILE_MAX_BYTES were read
    warning: str | None = None  # how it was decoded, when it was not plain UTF-8 (one line)


@dataclass(frozen=True)
class Places:
    """Where instruction files live: the project's root (the top of its git work tree, or the
    working directory) and home, both resolved, and mini-claude's own folders."""

    root: Path
    home: Path
    protected: tuple[Path, ...]

    def import_refusal(self, real: Path, named: Path) -> str | None:
        """Why a file an import names (resolved `real`, `named` as written) is not read, or None."""
        if any(part.lower() == GIT_FOLDER for path in (real, named) for part in path.parts):
            return "inside a git directory (its config may hold credentials)"
        private = self._private(real, named)
        if real.is_relative_to(self.root):
            # A project inside a dot folder (~/.config/nvim) is still the project: its own files may
            # be imported, not the rest of that folder's secrets (those resolve outside it).
            if private is not None and self._private(self.root, self.root) is None:
                return private
        elif not real.is_relative_to(self.home):
            return "outside the project and your home folder"
        elif private is not None and not self._instruction_home_markdown(real):
            return private
        return SECRET_REASON if looks_secret(real) or looks_secret(named) else None

    def link_refusal(self, real: Path, chosen: Chosen) -> str | None:
        """Why a hierarchy file that is a symlink to `real` is not read: a project's files may lead
        only inside the project and not to a private place; the user's may lead anywhere."""
        if chosen == "project":
            if not real.is_relative_to(self.root):
                return f"outside the project ({visible_path(str(self.root))})"
            if self._private(self.root, self.root) is None and (private := self._private(real, real)):
                return private
        return SECRET_REASON if looks_secret(real) else None

    def _private(self, real: Path, named: Path) -> str | None:
        return private_reason(real, named, self.root, self.home, self.protected)

    def _instruction_home_markdown(self, real: Path) -> bool:
        if real.suffix.lower() != ".md":
            return False
        for name in INSTRUCTION_HOMES:
            folder = Path(os.path.realpath(self.home / name))
            if real.is_relative_to(folder) and not real.is_relative_to(folder / STATE_FOLDER):
                return True
        return False


def places_for(root: Path, home: Path, protected: tuple[Path, ...]) -> Places:
    return Places(_real(root), _real(home), tuple(_real(folder) for folder in protected))


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def user_instruction_homes(home: Path) -> tuple[Path, Path]:
    """`~/.claude` (Claude Code's) and `~/.mini-claude` (ours, which wins where they differ)."""
    return home / INSTRUCTION_HOMES[0], app_home()


def looks_secret(path: Path) -> bool:
    name = path.name.lower()
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SECRET_NAMES)


def read_instruction(path: Path, places: Places, chosen: Chosen) -> FileText:
    """The file's text (see the module doc); FileNotFoundError when nothing is there, NotRead
    (one line, naming the file) when it is there but not read."""
    named = Path(os.path.abspath(path))
    real = Path(os.path.realpath(named))
    if chosen == "import":
        refusal = places.import_refusal(real, named)
        if refusal is not None:
            if not os.path.lexists(named):
                raise FileNotFoundError(named)
            raise NotRead(f"{named.name} not read: {shown_path(named)}: {refusal}")
    if (private_place(named.parent) or private_place(real)) and (foreign := foreign_entry(named)):
        raise NotRead(f"{named.name} not read: {foreign}")  # in our own folders: it may have been swapped in
    root = Path("/") if chosen != "project" or places.root == Path("/") else places.root

    def refuse(target: Path) -> str | None:
        if chosen == "import":
            return places.import_refusal(target, target)
        return places.link_refusal(target, chosen)

    try:
        found = safe_read.read_bytes(named, root, INSTRUCTION_FILE_MAX_BYTES, refuse_target=refuse)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(named) from None
    except OSError as error:
        raise NotRead(f"{named.name} not read: {safe_read.describe(error)}") from None
    if PRIVATE_KEY_MARK in found.data:
        raise NotRead(f"{named.name} not read: {shown_path(named)} holds a private key")
    decoded = decode_text(found.data, complete=not found.was_cut)
    if decoded.text is None:
        raise NotRead(f"{named.name} not read: {shown_path(named)}: {decoded.warning}")
    warning = f"{shown_path(named)}: {decoded.warning}" if decoded.warning else None
    return FileText(named, decoded.text.removeprefix("\ufeff"), found.size, found.was_cut, warning)


def shown_path(path: Path) -> str:
    """A path for the user: `~/…` inside home, else absolute; invisible characters written out."""
    home = Path.home()
    text = str(path)
    if is_within(path, home) and path.is_relative_to(home):
        text = "~" if path == home else f"~/{path.relative_to(home)}"
    return visible_path(text)
