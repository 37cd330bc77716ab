"""MEMORY.md: one line per memory, derived from the files and kept in step with them, and its
bounded form for the prompt."""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import quote

from mini_claude.core import prompts
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.frontmatter.codec import fold_value
from mini_claude.memory.store.headers import FileStat, HeaderCache, newest_first, stat_memory_files
from mini_claude.memory.store.memory_file import MemoryFile
from mini_claude.memory.store.naming import INDEX_FILE

INDEX_TITLE = "# Memory index"
INDEX_NAME_MAX_CHARS = 80
INDEX_DESCRIPTION_MAX_CHARS = 150  # with the name, keeps each entry under ~200 chars
PROMPT_INDEX_MAX_LINES = 200
PROMPT_INDEX_MAX_BYTES = 25_000
INDEX_TAG = "memory-index"  # what the index is wrapped in, in the system prompt

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]()<>#|])")
# Zero-width, bidi controls and other invisible format characters: they can disguise text.
_INVISIBLE_CATEGORIES = {"Cc", "Cf", "Co", "Cs"}


def clean_inline(text: str, max_chars: int) -> str:
    """One visible line: newlines folded, invisible and bidi characters removed, length bounded."""
    visible = fold_value(text)
    # isprintable() is False for every invisible category (and a few more): a quick check first.
    if not visible.isprintable():
        visible = "".join(ch for ch in visible if unicodedata.category(ch) not in _INVISIBLE_CATEGORIES)
    visible = " ".join(visible.split())
    if len(visible) > max_chars:
        visible = visible[: max_chars - 1].rstrip() + "…"
    return visible


def index_line(memory: MemoryFile) -> str:
    name = _MARKDOWN_SPECIAL.sub(r"\\\1", clean_inline(memory.name, INDEX_NAME_MAX_CHARS))
    description = _MARKDOWN_SPECIAL.sub(
        r"\\\1", clean_inline(memory.description, INDEX_DESCRIPTION_MAX_CHARS)
    )
    # A hand-made file name may hold a line break: percent-encode it so the entry stays one line.
    target = memory.file_name
    if not target.isprintable():
        target = "".join(
            ch if ch == " " or ch.isprintable() else quote(ch, errors="surrogateescape") for ch in target
        )
    if re.search(r"[\s()<>]", target):
        target = "<" + target.replace("<", "%3C").replace(">", "%3E") + ">"
    return f"- **[{name}]({target})** ({memory.type}) — {description}"


def render_index(memories: Iterable[MemoryFile], line: Callable[[MemoryFile], str] = index_line) -> str:
    """MEMORY.md's text; `line` may hand back lines made earlier (it must equal index_line)."""
    return "\n".join([INDEX_TITLE, *(line(m) for m in memories)]) + "\n"


class IndexFile:
    """MEMORY.md of one folder, rewritten from the headers when it differs from what they make;
    `signature` is the stat of every memory file and of MEMORY.md as last indexed, so `refresh`
    can tell cheaply whether anything changed (a hand-written MEMORY.md is undone too)."""

    def __init__(self, root: Path, headers: HeaderCache) -> None:
        self.root, self.headers = root, headers
        self.signature: tuple[FileStat, ...] | None = None
        # file name -> (the header it was made from, its MEMORY.md line): unchanged files cost nothing.
        self._lines: dict[str, tuple[MemoryFile, str]] = {}

    def current_signature(self) -> tuple[FileStat, ...]:
        return self._signature_of(stat_memory_files(self.root))

    def rebuild(self) -> None:
        """Under the folder's lock. One directory scan serves the index and the signature: a file
        that changes after it differs from the signature, so the next refresh picks it up."""
        stats = stat_memory_files(self.root)
        memories = [self.headers.header(found) for found in sorted(stats, key=newest_first)]
        text = render_index([m for m in memories if m.problem is None], line=self._remembered_line())
        index_path, wanted = self.root / INDEX_FILE, text.encode("utf-8")
        try:  # never more than the new index's size: a MEMORY.md that is huge is rewritten anyway
            current = safe_read.read_bytes(
                index_path, self.root, len(wanted), follow_symlink=False, owner_only=True
            )
            unchanged = current.data == wanted and not current.was_cut
        except OSError:  # missing, not a regular file of ours (a symlink, a FIFO): replaced
            unchanged = False
        if not unchanged:
            try:
                write_atomic(index_path, text)
            except OSError as error:
                why = safe_read.describe(error)
                raise MemoryStoreError(
                    prompts.notice("memory_write_failed", file=INDEX_FILE, error=why)
                ) from error
        self.signature = self._signature_of(stats)

    def _signature_of(self, memory_stats: list[FileStat]) -> tuple[FileStat, ...]:
        stats = sorted(memory_stats)
        with contextlib.suppress(OSError):
            index = os.stat(self.root / INDEX_FILE)
            stats.append(
                FileStat(INDEX_FILE, index.st_mtime_ns, index.st_size, index.st_ino, False, index.st_mode)
            )
        return tuple(stats)

    def _remembered_line(self) -> Callable[[MemoryFile], str]:
        """`index_line`, made again only for headers read since the last rebuild."""
        previous, self._lines = self._lines, {}

        def line(memory: MemoryFile) -> str:
            made_from, text = previous.get(memory.file_name, (None, ""))
            if made_from is not memory:
                text = index_line(memory)
            self._lines[memory.file_name] = (memory, text)
            return text

        return line
