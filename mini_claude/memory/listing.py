"""Memories as text for people: the `/memory` command and `mini-claude memory ...`.

Every line is one line whatever the files hold: names and descriptions are folded to one line
with every character drawn as nothing in them marked (`marked_text`: a list is a view the user
reviews, so nothing is dropped unseen), file names bash-quoted (`visible_path`), other text from
the files made visible (`visible_text`)."""

from __future__ import annotations

import time
from collections import Counter

from mini_claude.core.files import safe_read
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.frontmatter.codec import fold_value
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import marked_text, visible_text
from mini_claude.memory.provenance import describe, written_by_hand
from mini_claude.memory.recall.history import RecallHistory, recall_note
from mini_claude.memory.scopes import SCOPE_NAMES, SCOPE_WORDS, MemoryScopes
from mini_claude.memory.staleness import doubts, expired, expiry_condition
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.naming import matches_garbled_name, name_key

LIST_DESCRIPTION_MAX_CHARS = 100
SHOW_MAX_BYTES = 100_000  # of a memory shown whole; a memory is a note, a huge one is a mistake
NAME_MAX_CHARS = 80
NO_MEMORIES = "No memories saved yet."
REPL_LIST_COMMAND = "/memory"


def _count(number: int, singular: str, plural: str) -> str:
    return f"{number} {singular if number == 1 else plural}"


def list_lines(memories: MemoryScopes | MemoryStore, now: float | None = None) -> list[str]:
    """`N memories, M broken files:` then `[type] name — description  (file name)`, one line
    per memory (a scope other than the project's named in the brackets: `[user · yours]`) with
    its recall history and what to know of it (hidden by a narrower one of its name, expired,
    about files changed since, written by hand without frontmatter); broken files last, flagged
    with the reason: the count names every memory line below it."""
    scopes = MemoryScopes.of(memories)
    found = scopes.scan()
    if not found:
        return [NO_MEMORIES]
    now = time.time() if now is None else now
    histories = {store.scope: RecallHistory(store.root).load() for store in scopes.stores()}
    good = [m for m in found if m.problem is None]
    broken = [m for m in found if m.problem is not None]
    broken_count = _count(len(broken), "broken file", "broken files")
    if not good:
        lines = [f"No usable memories; {broken_count}:"]
    else:
        lines = [_count(len(good), "memory", "memories") + (f", {broken_count}:" if broken else ":")]
    marks = memory_marks(scopes, good, now)
    for memory in good:
        description = one_line(memory.description, LIST_DESCRIPTION_MAX_CHARS)
        warning = "  (warning: " + visible_text(memory.warnings[0]) + ")" if memory.warnings else ""
        note = recall_note(histories[memory.scope].entries.get(memory.file_name), now)
        notes = [note] if note else []
        notes += marks.get(memory.key, [])
        lines.append(
            f"[{_kind(memory)}] {one_line(memory.name, NAME_MAX_CHARS)} — {description}"
            f"  ({visible_path(memory.file_name)})" + "".join(f"  ({n})" for n in notes) + warning
        )
    for memory in broken:
        lines.append(
            f"[broken] {visible_path(memory.key)} — {visible_text(memory.problem or '')} "
            "(left out of the index; fix or delete it)"
        )
    for history in histories.values():
        if history.problem:
            lines.append(
                f"(recall history: {visible_text(history.problem)}; it is rebuilt at the next recall)"
            )
    return lines


def memory_marks(
    scopes: MemoryScopes, memories: list[MemoryFile], now: float, only: MemoryFile | None = None
) -> dict[str, list[str]]:
    """What to know of each memory (by key), a few words each: hidden by a narrower one of its
    name, expired or holding until a condition, about files changed since, written without
    frontmatter. Stale and expired ones are what `/memory tidy` offers first. `only`: of that one
    memory (`memories` still say what may hide it)."""
    hidden = scopes.shadowed(memories)
    marked = [only] if only is not None else memories
    doubted = doubts(marked, scopes.project_root, now)
    marks: dict[str, list[str]] = {}
    for memory in marked:
        mark = marks.setdefault(memory.key, [])
        if (winner := hidden.get(memory.key)) is not None:
            mark.append(f"hidden by the one of this name in {SCOPE_NAMES[winner.scope]}, {winner.file_name}")
        if expired(memory, now):
            mark.append(f"expired {one_line(memory.expires, NAME_MAX_CHARS)}: no longer recalled")
        elif condition := expiry_condition(memory):
            mark.append(f"holds until: {one_line(condition, LIST_DESCRIPTION_MAX_CHARS)}")
        if stale := [why for why in doubted.get(memory.key, []) if not why.startswith("expired ")]:
            mark.append("stale: " + "; ".join(one_line(why, NAME_MAX_CHARS) for why in stale))
        if memory.plain:
            mark.append("written by hand, no frontmatter")
    return {key: mark for key, mark in marks.items() if mark}


def _kind(memory: MemoryFile) -> str:
    return memory.type if memory.scope == "project" else f"{memory.type} · {SCOPE_WORDS[memory.scope]}"


def one_line(text: str, max_chars: int) -> str:
    """`text` folded to one line and cut to `max_chars`, every character drawn as nothing in it
    written out (`marked_text`)."""
    line = fold_value(text)
    if len(line) > max_chars:
        line = line[: max_chars - 1].rstrip() + "…"
    return marked_text(line)


class NameNotFound(LookupError):
    """The message says which names exist or which ones matched."""


def resolve(
    memories: MemoryScopes | MemoryStore, query: str, list_command: str = REPL_LIST_COMMAND
) -> MemoryFile:
    """The one memory `query` names (by name, file name, or `user/…`); a clear error otherwise.
    A name that memories of several scopes hold names the narrowest one's (the one used).

    `list_command` is what the user types to see the names where they are (the REPL or a shell)."""
    query = query.strip()
    if not query:
        raise NameNotFound(f"Give a memory's name or file name (see {list_command} for the list).")
    matches = MemoryScopes.of(memories).find(query)
    if len({m.scope for m in matches}) > 1 and len({name_key(m.name) for m in matches}) == 1:
        matches = [m for m in matches if m.scope == matches[0].scope]
    if not matches:
        raise NameNotFound(f"No memory named {query!r} (see {list_command} for the list).")
    if len(matches) > 1:
        names = ", ".join(f"{m.name!r} ({visible_path(m.key)})" for m in matches[:10])
        more = f" and {len(matches) - 10} more" if len(matches) > 10 else ""
        raise NameNotFound(f"{query!r} matches {len(matches)} memories: {names}{more}. Use the file name.")
    return matches[0]


def name_candidates(memories: MemoryScopes | MemoryStore, typed: str) -> list[tuple[str, str]]:
    """What `/memory show|edit|rm|promote|demote` can be given that starts like `typed`: (text,
    description). A memory's name when no other memory has it, else its key (file name, or
    `user/…`; always for broken files, which have no usable name). Names match as loosely as in
    `MemoryStore.find` (case, spacing, U+FFFD)."""
    found = MemoryScopes.of(memories).scan()
    keys = {m.key: name_key(m.name) for m in found if m.problem is None}
    names = Counter(keys.values())
    typed_key, file_prefix = name_key(typed), typed.strip().casefold()
    candidates = []
    for memory in found:
        key = keys.get(memory.key)
        if key is None:
            description = f"broken: {memory.problem}"
        elif names[key] > 1:
            description = f"[{memory.type}] {memory.name}"
        else:
            description = f"[{memory.type}] {memory.description}"
            if key.startswith(typed_key) or matches_garbled_name(memory.name, typed, prefix=True):
                candidates.append((memory.name, one_line(description, LIST_DESCRIPTION_MAX_CHARS)))
                continue
        if memory.key.casefold().startswith(file_prefix) or memory.file_name.casefold().startswith(
            file_prefix
        ):
            candidates.append((memory.key, one_line(description, LIST_DESCRIPTION_MAX_CHARS)))
    return candidates


def show_text(memories: MemoryScopes | MemoryStore, memory: MemoryFile) -> str:
    """The memory's text, at most SHOW_MAX_BYTES of it; a cut says so and where the whole file is.

    Raises OSError (`safe_read.describe` says why) for a file that is not read: not a regular
    file inside the memory directory."""
    found = MemoryScopes.of(memories).store_of(memory).read_text(memory, SHOW_MAX_BYTES)
    notes = [f"[{found.warning}]"] if found.warning else []
    if found.was_cut:
        notes.append(
            f"[… cut: shown are the first {safe_read.format_size(SHOW_MAX_BYTES)} of "
            f"{safe_read.format_size(found.size)}; the whole file is {memory.path}]"
        )
    if not notes:
        return found.text
    return found.text.rstrip("\n") + "\n" + "\n".join(notes) + "\n"


def about_lines(
    memories: MemoryScopes | MemoryStore, memory: MemoryFile, now: float | None = None
) -> list[str]:
    """What `/memory show` says before the text: its scope and who wrote it, when, from what
    files, whether a person edited it since; what to know of it (stale, expired, hidden)."""
    scopes, now = MemoryScopes.of(memories), time.time() if now is None else now
    lines = [f"In {SCOPE_NAMES[memory.scope]}: {visible_path(str(memory.path))}"]
    if memory.plain:
        lines.append(
            "Written by hand, without frontmatter: its name is the file's, its description its first line."
        )
    else:
        text = show_text(scopes, memory)
        parsed = frontmatter.parse(text)
        lines += [visible_text(line) for line in describe(parsed.fields, written_by_hand(parsed), now)]
    good = [m for m in scopes.scan() if m.problem is None]
    marks = memory_marks(scopes, good, now, only=memory).get(memory.key, [])
    lines += [f"Note: {mark}." for mark in marks if not mark.startswith("written by hand")]
    return lines
