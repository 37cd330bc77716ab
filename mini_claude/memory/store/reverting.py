"""Reverting a change set (changes.py): each file put back while it is as the set left it; one
edited since (by hand, by another session) left as it is, one deleted since not brought back, and,
on an undo, a memory whose name another memory of its scope holds now not restored (two memories
with one name would be ambiguous); each gets one line naming where its earlier version lies.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.paths import visible_path
from mini_claude.memory.store import trash
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.naming import name_key
from mini_claude.memory.store.trash import ChangeSetFolder, Entry, Manifest

Roots = Mapping[str, Path]  # the folders of the other scopes a set may change, by scope


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class _Plan:
    """Reverting one file: `earlier` is put back (None: the set created it, it is removed)."""

    entry: Entry
    current: bytes | None
    earlier: bytes | None = None
    name: str = ""


def revert(
    root: Path,
    folder: ChangeSetFolder,
    manifest: Manifest,
    applied: bool,
    memories: Sequence[MemoryFile] = (),
    roots: Roots | None = None,
    own: str = "project",
) -> tuple[list[str], list[str]]:
    """Put back each file of the set still as it left it: (lines restored, lines left). `applied`:
    it was applied whole (a missing file it created was deleted since, not never written).
    `memories` (an undo, of every scope): a restore whose name another memory of its scope would
    hold afterwards is skipped. `own`: the scope of the folder holding the set."""
    revert = _Reverting({**(roots or {}), "": root}, folder, manifest.label)
    plans = [plan for entry in reversed(manifest.entries) if (plan := revert.plan(entry, applied))]
    for plan in revert.without_name_clashes(plans, memories, own):
        try:
            revert.carry_out(plan)
        except OSError as error:
            revert.could_not(plan.entry, error)
    return revert.restored, revert.left


class _Reverting:
    def __init__(self, roots: Roots, folder: ChangeSetFolder, label: str) -> None:
        self.roots, self.folder, self.label = roots, folder, label
        self.restored: list[str] = []
        self.left: list[str] = []

    def plan(self, entry: Entry, applied: bool) -> _Plan | None:
        """How to revert `entry`, or None (with the line saying why, if anything is to be said)."""
        shown, copy, label, say = _shown(entry), self.copy(entry), self.label, self.left.append
        if entry.scope not in self.roots:
            say(
                f"{shown}: its folder is not used in this session: not reverted; its version before is {copy}"
            )
            return None
        try:
            current = current_bytes(self.roots[entry.scope], entry.file)
            if entry.before is None and current is None:
                if applied:  # (else it may never have been written)
                    say(f"{shown}, which {label} created, was deleted since: nothing to remove")
            elif digest_or_none(current) == entry.after:
                if entry.before is None:
                    return _Plan(entry, current)
                earlier = self.folder.read(entry.part(trash.BEFORE), entry.file)
                if digest_of(earlier) != entry.before:
                    raise OSError(errno.EINVAL, "its version before was altered in the trash", copy)
                name = frontmatter.parse(earlier.decode(errors="replace")).fields.get("name", "")
                return _Plan(entry, current, earlier, name)
            elif digest_or_none(current) == entry.before:
                pass  # the set never got to it
            elif entry.before is None:
                say(f"{shown} was edited since {label} created it: kept as it is (delete it if unwanted)")
            elif entry.after is None:
                say(f"{shown} exists again: not overwritten; the version {label} deleted is {copy}")
            elif current is None:
                say(f"{shown} was deleted since {label}: not brought back; its version before it is {copy}")
            else:
                say(f"{shown} was edited since {label}: not overwritten; its version before it is {copy}")
        except OSError as error:
            self.could_not(entry, error)
        return None

    def without_name_clashes(
        self, plans: list[_Plan], memories: Sequence[MemoryFile], own: str
    ) -> list[_Plan]:
        """The plans whose restored memory's name no other memory holds once the undo is done (one
        saved since under that name, or another restore); each dropped gets a line. A dropped
        restore keeps its file as it is now, whose name may clash in turn: hence the loop."""
        usable = [m for m in memories if m.problem is None]
        while usable:
            reverted = {(plan.entry.scope or own, plan.entry.file) for plan in plans}
            held = {
                (m.scope, name_key(m.name)): m.file_name
                for m in reversed(usable)
                if (m.scope, m.file_name) not in reverted
            }
            for plan in plans:
                file, scope = plan.entry.file, plan.entry.scope or own
                if plan.name and (holder := held.setdefault((scope, name_key(plan.name)), file)) != file:
                    now = f"a memory named {plan.name!r} exists now ({visible_path(holder)})"
                    self.left.append(
                        f"{_shown(plan.entry)} not restored: {now}; its version before {self.label} is "
                        + self.copy(plan.entry)
                    )
                    plans = [other for other in plans if other is not plan]
                    break
            else:
                break
        return plans

    def carry_out(self, plan: _Plan) -> None:
        """Revert one file, keeping what it replaces in `after/`."""
        entry, shown = plan.entry, _shown(plan.entry)
        if plan.current is not None:
            with contextlib.suppress(FileExistsError):  # kept already, by an undo a crash stopped
                self.folder.keep(entry.part(trash.AFTER), entry.file, plan.current)
        write_file(self.roots[entry.scope] / entry.file, plan.earlier, entry.mtime_ns)
        if plan.earlier is not None:
            self.restored.append(f"restored {shown}")
        else:
            kept = self.folder.shown(entry.part(trash.AFTER), entry.file)
            self.restored.append(f"removed {shown} ({self.label} had created it; it is in {kept})")

    def copy(self, entry: Entry) -> str:
        return self.folder.shown(entry.part(trash.BEFORE), entry.file)

    def could_not(self, entry: Entry, error: OSError) -> None:
        self.left.append(f"{_shown(entry)} could not be put back: {safe_read.describe(error)}")


def _shown(entry: Entry) -> str:
    return visible_path(f"{entry.scope}/{entry.file}" if entry.scope else entry.file)


def write_file(path: Path, data: bytes | None, mtime_ns: int | None) -> None:
    """Write or delete one file; `mtime_ns`: the modification time it is given."""
    if data is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    else:
        write_atomic(path, data)
        if mtime_ns is not None:
            os.utime(path, ns=(mtime_ns, mtime_ns), follow_symlinks=False)


def current_bytes(root: Path, file_name: str) -> bytes | None:
    """The file's bytes, None when there is none; OSError when it is not one we keep whole."""
    try:
        found = safe_read.read_bytes(root / file_name, root, trash.COPY_MAX_BYTES, owner_only=True)
    except FileNotFoundError:
        return None
    if found.was_cut:
        limit = safe_read.format_size(trash.COPY_MAX_BYTES)
        raise OSError(errno.EFBIG, f"over {limit}, too large to keep in the trash", str(root / file_name))
    return found.data


def digest_or_none(data: bytes | None) -> str | None:
    return digest_of(data) if data is not None else None
