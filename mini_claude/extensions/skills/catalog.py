"""Every skill and custom command of the session, looked up again when asked (a file is re-read
only when it changed), so one added or edited during a session counts from the next message.

Who wins a name: a skill over a command, the user's over the project's, ours (`.mini-claude`)
over Claude Code's (`.claude`); a built-in command over them all for `/name` (a skill so named
can still be loaded by the model). Whatever loses, and every file that cannot be used, is listed
with why (`/skills`). The model is told the skills once per conversation in the system prompt
(names and descriptions only); what changes later reaches it as a reminder.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mini_claude.extensions.skills.entries import Broken, Entry, Kind, entry_from
from mini_claude.extensions.skills.reading import NotReadable, read_header
from mini_claude.extensions.skills.scanning import Found, Place, find, places

Stamp = tuple[int, ...]


@dataclass(frozen=True)
class Listing:
    entries: tuple[Entry, ...] = ()  # in use, by name
    broken: tuple[Broken, ...] = ()  # not used, and why
    notes: tuple[str, ...] = ()  # a place with more than could be looked at


class Catalog:
    def __init__(self, root: Path, home: Path, *, trusted: bool) -> None:
        """`root`: the project root (its files must stay inside it); `trusted`: whether the
        project's `allowed-tools` may pre-approve anything (folder trust, as for its settings)."""
        self.root = Path(os.path.realpath(root))
        self.home = home
        self.trusted = trusted
        self.reserved: frozenset[str] = frozenset()  # the built-in commands' names (the UI's)
        self._cache: dict[Path, tuple[Stamp, Entry | Broken]] = {}
        self._lock = threading.Lock()
        self.listing = Listing()

    def refresh(self) -> Listing:
        """Look at every place again; re-read only what changed."""
        with self._lock:
            entries: dict[str, Entry] = {}
            broken: list[Broken] = []
            notes: list[str] = []
            for kind in ("skill", "command"):
                for place in places(kind, self.root, self.home):
                    found, note = find(place)
                    notes += [note] if note else []
                    for item in found:
                        self._take(self._read(place, item), entries, broken)
            self.listing = Listing(
                tuple(sorted(entries.values(), key=lambda e: e.name)), tuple(broken), tuple(notes)
            )
            return self.listing

    def _take(self, read: Entry | Broken, entries: dict[str, Entry], broken: list[Broken]) -> None:
        if isinstance(read, Broken):
            broken.append(read)
        elif (winner := entries.get(read.name)) is not None:
            broken.append(Broken(read.source, f"/{read.name} is also {winner.source}, which wins"))
        else:
            entries[read.name] = read

    def _read(self, place: Place, item: Found) -> Entry | Broken:
        try:
            stamp = _stamp(item.path)
        except OSError:
            what = "no SKILL.md in it" if place.kind == "skill" else "it cannot be read"
            return Broken(
                item.source.removesuffix("/SKILL.md") if place.kind == "skill" else item.source, what
            )
        cached = self._cache.get(item.path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        assert place.kind != "agent"  # agent files are extensions/agents'
        try:
            header = read_header(item.path, place.root)
            read: Entry | Broken = entry_from(
                place.kind, item.name, header.frontmatter, header.first_line,
                path=item.path, source=item.source, scope=place.scope, root=place.root,
            )  # fmt: skip
        except (NotReadable, FileNotFoundError) as problem:
            read = Broken(item.source, str(problem) if isinstance(problem, NotReadable) else "it is gone")
        self._cache[item.path] = (stamp, read)
        return read

    # --- looking up -----------------------------------------------------------------------------

    def runnable(self) -> list[Entry]:
        """What the user can run as `/name` (a built-in's name stays the built-in's)."""
        return [entry for entry in self.listing.entries if entry.name not in self.reserved]

    def clashes(self) -> list[Broken]:
        """Entries whose `/name` is a built-in command's, for `/skills` and start-up."""
        return [
            Broken(entry.source, f"/{entry.name} is a built-in command, which wins" + (
                "; the model can still load the skill" if entry.model_invocable else ""))
            for entry in self.listing.entries
            if entry.name in self.reserved
        ]  # fmt: skip

    def find(self, name: str) -> Entry | None:
        """What `/name` runs: the entry so named, else the one command whose last part it is
        (`/component` for `/frontend:component`, as Claude Code names them), else None."""
        entries = {entry.name: entry for entry in self.runnable()}
        if name in entries:
            return entries[name]
        tails = [entry for entry in entries.values() if entry.name.rsplit(":", 1)[-1] == name]
        return tails[0] if len(tails) == 1 and name not in self.reserved else None

    def model_skills(self) -> list[Entry]:
        return [entry for entry in self.listing.entries if entry.kind == "skill" and entry.model_invocable]

    def skill(self, name: str) -> Entry | None:
        return next(
            (entry for entry in self.listing.entries if entry.kind == "skill" and entry.name == name), None
        )

    def allowed_tools(self, entry: Entry) -> tuple[str, ...]:
        """What `entry` pre-approves: a project's only in a trusted folder."""
        return entry.allowed_tools if entry.scope == "user" or self.trusted else ()

    def of_kind(self, kind: Kind) -> Iterable[Entry]:
        return (entry for entry in self.listing.entries if entry.kind == kind)


def _stamp(path: Path) -> Stamp:
    """What changes when the file (or the link to it) does; OSError when it is not there."""
    link, target = os.lstat(path), os.stat(path)
    return (link.st_ino, link.st_mtime_ns, target.st_dev, target.st_ino, target.st_size, target.st_mtime_ns)
