"""Memories as text for people: the `/memory` command and `mini-claude memory ...`.

Every line is one line whatever the files hold: names and descriptions are folded to one line
with every character drawn as nothing in them marked (`marked_text`: a list is a view the user
reviews, so nothing is dropped unseen), file names bash-quoted (`visible_path`), other text from
the files made visible (`visible_text`)."""

from __future__ import annotations

import time
from collections import Counter

from mini_claude.core.files import safe_read
from mini_claude.core.frontmatter.codec import fold_value
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import marked_text, visible_text
from mini_claude.memory.recall.history import RecallHistory, recall_note
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


def list_lines(store: MemoryStore, now: float | None = None) -> list[str]:
    """`N memories, M broken files:` then `[type] name — description  (file name)`, one line
    per memory with its recall history when there is one, broken files last, flagged with the
    reason: the count names every memory line below it."""
    memories = store.scan()
    if not memories:
        return [NO_MEMORIES]
    history, now = RecallHistory(store.root).load(), time.time() if now is None else now
    good = [m for m in memories if m.problem is None]
    broken = [m for m in memories if m.problem is not None]
    broken_count = _count(len(broken), "broken file", "broken files")
    if not good:
        lines = [f"No usable memories; {broken_count}:"]
    else:
        lines = [_count(len(good), "memory", "memories") + (f", {broken_count}:" if broken else ":")]
    for memory in good:
        description = one_line(memory.description, LIST_DESCRIPTION_MAX_CHARS)
        warning = "  (warning: " + visible_text(memory.warnings[0]) + ")" if memory.warnings else ""
        note = recall_note(history.entries.get(memory.file_name), now)
        lines.append(
            f"[{memory.type}] {one_line(memory.name, NAME_MAX_CHARS)} — {description}"
            f"  ({visible_path(memory.file_name)})" + (f"  ({note})" if note else "") + warning
        )
    for memory in broken:
        lines.append(
            f"[broken] {visible_path(memory.file_name)} — {visible_text(memory.problem or '')} "
            "(left out of the index; fix or delete it)"
        )
    if history.problem:
        lines.append(f"(recall history: {visible_text(history.problem)}; it is rebuilt at the next recall)")
    return lines


def one_line(text: str, max_chars: int) -> str:
    """`text` folded to one line and cut to `max_chars`, every character drawn as nothing in it
    written out (`marked_text`)."""
    line = fold_value(text)
    if len(line) > max_chars:
        line = line[: max_chars - 1].rstrip() + "…"
    return marked_text(line)


class NameNotFound(LookupError):
    """The message says which names exist or which ones matched."""


def resolve(store: MemoryStore, query: str, list_command: str = REPL_LIST_COMMAND) -> MemoryFile:
    """The one memory `query` names (by name or file name); a clear error otherwise.

    `list_command` is what the user types to see the names where they are (the REPL or a shell)."""
    query = query.strip()
    if not query:
        raise NameNotFound(f"Give a memory's name or file name (see {list_command} for the list).")
    matches = store.find(query)
    if not matches:
        raise NameNotFound(f"No memory named {query!r} (see {list_command} for the list).")
    if len(matches) > 1:
        names = ", ".join(f"{m.name!r} ({visible_path(m.file_name)})" for m in matches[:10])
        more = f" and {len(matches) - 10} more" if len(matches) > 10 else ""
        raise NameNotFound(f"{query!r} matches {len(matches)} memories: {names}{more}. Use the file name.")
    return matches[0]


def name_candidates(store: MemoryStore, typed: str) -> list[tuple[str, str]]:
    """What `/memory show|edit|rm` can be given that starts like `typed`: (text, description).

    A memory's name when no other memory has it, else its file name (always for broken files,
    which have no usable name). Names match as loosely as in `MemoryStore.find` (case, spacing, U+FFFD)."""
    memories = store.scan()
    keys = {m.file_name: name_key(m.name) for m in memories if m.problem is None}
    names = Counter(keys.values())
    typed_key, file_prefix = name_key(typed), typed.strip().casefold()
    candidates = []
    for memory in memories:
        key = keys.get(memory.file_name)
        if key is None:
            description = f"broken: {memory.problem}"
        elif names[key] > 1:
            description = f"[{memory.type}] {memory.name}"
        else:
            description = f"[{memory.type}] {memory.description}"
            if key.startswith(typed_key) or matches_garbled_name(memory.name, typed, prefix=True):
                candidates.append((memory.name, one_line(description, LIST_DESCRIPTION_MAX_CHARS)))
                continue
        if memory.file_name.casefold().startswith(file_prefix):
            candidates.append((memory.file_name, one_line(description, LIST_DESCRIPTION_MAX_CHARS)))
    return candidates


def show_text(store: MemoryStore, memory: MemoryFile) -> str:
    """The memory's text, at most SHOW_MAX_BYTES of it; a cut says so and where the whole file is.

    Raises OSError (`safe_read.describe` says why) for a file that is not read: not a regular
    file inside the memory directory."""
    found = store.read_text(memory, SHOW_MAX_BYTES)
    notes = [f"[{found.warning}]"] if found.warning else []
    if found.was_cut:
        notes.append(
            f"[… cut: shown are the first {safe_read.format_size(SHOW_MAX_BYTES)} of "
            f"{safe_read.format_size(found.size)}; the whole file is {memory.path}]"
        )
    if not notes:
        return found.text
    return found.text.rstrip("\n") + "\n" + "\n".join(notes) + "\n"
