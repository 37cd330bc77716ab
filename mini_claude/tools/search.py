"""The search tools: list_files (glob) and grep_search (regex over file contents), in pure Python.

Both walk the tree the same way (tools/walk.py), cap their output, and stop at a time limit
(tools/patterns.py), keeping what they found so far.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.paths import visible_path
from mini_claude.tools import patterns, walk
from mini_claude.tools.base import ToolContext, ToolResult, count_noun
from mini_claude.tools.file_kinds import SNIFF_BYTES, looks_binary
from mini_claude.tools.patterns import OutOfTime, SearchClock, TooSlow

MAX_LIST_ENTRIES = 500
MAX_MATCHES = 200
MAX_MATCH_LINE_CHARS = 300
MATCH_CONTEXT_CHARS = 60  # shown before the match when a long line is clipped
MAX_GREP_FILE_BYTES = 10 * 1024 * 1024


# Patterns that look at what is around a match, or at the very start or end of the text, can
# match a line on its own but not the same line inside the whole file: search those line by line.
_LINE_CONTEXT_SYNTAX = re.compile(r"\(\?<?[=!]|\\[AZzGK]")
_CR_BEFORE_NEWLINE = re.compile(r"\r+\n")  # a line is searched without its line ending


@dataclass
class _Timing:
    """What the time limits cost a search: the files or paths skipped, and where it stopped."""

    clock: SearchClock = field(default_factory=SearchClock)
    slow: list[str] = field(default_factory=list)
    stopped_at: str | None = None

    def notes(self, what: str) -> list[str]:
        notes = []
        if self.slow:
            notes.append(
                prompts.notice(
                    "search_too_slow",
                    count=len(self.slow),
                    what=what,
                    seconds=f"{patterns.MATCH_TIME_LIMIT_S:g}",
                    where=self.slow[0],
                )
            )
        if self.stopped_at is not None:
            notes.append(
                prompts.notice(
                    "search_timed_out", seconds=f"{patterns.SEARCH_TIME_LIMIT_S:g}", where=self.stopped_at
                )
            )
        return notes


def list_files(ctx: ToolContext, pattern: str, path: str | None = None) -> ToolResult:
    base, shown_base = walk.search_root(ctx, "list_files", path, want_dir=True)
    pattern = pattern.strip().removeprefix("./")
    if not pattern:
        raise ToolError(prompts.notice("list_pattern_empty"))
    if os.path.isabs(pattern) or ".." in pattern.split("/"):
        raise ToolError(prompts.notice("list_pattern_relative", pattern=pattern))
    regex = patterns.compile_glob(pattern, "pattern")
    max_depth = None if "**" in pattern else pattern.count("/") + 1
    state = walk.walk_state(ctx)
    timing = _Timing()
    shown: list[str] = []
    total = 0
    for rel, entry in walk.walk(str(base), "", 1, max_depth, state):
        timing.clock.start_item()
        try:
            matched = timing.clock.run(regex.fullmatch, rel)
        except OutOfTime:
            timing.stopped_at = visible_path(rel)
            break
        except TooSlow:
            timing.slow.append(visible_path(rel))
            continue
        if matched:
            total += 1
            if len(shown) < MAX_LIST_ENTRIES:
                suffix = "/" if entry.is_dir(follow_symlinks=False) else ""
                shown.append(walk.shown_path(ctx, base, rel) + suffix)
    if not shown:
        text = prompts.notice("list_no_matches", pattern=pattern, path=shown_base)
    else:
        text = "\n".join(shown)
        if total > len(shown):
            text += "\n" + prompts.notice("list_truncated", shown=len(shown), omitted=total - len(shown))
    text += walk.walk_notes(state)
    text = "\n".join([text, *timing.notes("paths")])
    return ToolResult(text, count_noun(total, "path"))


def grep_search(
    ctx: ToolContext, pattern: str, path: str | None = None, include: str | None = None
) -> ToolResult:
    line_regex = patterns.compile_regex(pattern)
    # The whole file is searched at once for the next candidate line, which is then checked on
    # its own: one call per file rather than per line (each timed call costs microseconds).
    text_regex = (
        None if _LINE_CONTEXT_SYNTAX.search(pattern) else patterns.compile_regex(pattern, re.MULTILINE)
    )
    base, shown_base = walk.search_root(ctx, "grep_search", path, want_dir=False)
    name_filter = patterns.compile_glob(include, "include") if include else None
    state = walk.walk_state(ctx)
    timing = _Timing()
    candidates: Iterator[tuple[str, Path]]
    if base.is_dir():
        candidates = (
            (rel, Path(entry.path))
            for rel, entry in walk.walk(str(base), "", 1, None, state)
            if entry.is_file(follow_symlinks=False)  # like ripgrep: symlinks are not followed
        )
    else:
        candidates = iter([(base.name, base)])

    out: list[str] = []
    more = False
    too_large = 0
    grown = 0
    for rel, file in candidates:
        shown_file = walk.shown_path(ctx, base, rel) if base.is_dir() else shown_base
        if timing.clock.expired():
            timing.stopped_at = shown_file
            break
        timing.clock.start_item()
        try:
            if name_filter is not None and not timing.clock.run(name_filter.fullmatch, file.name):
                continue
            data = _read_for_grep(file)
            if data is None:
                too_large += 1
                continue
            grown += len(data) > MAX_GREP_FILE_BYTES
            found = _grep_text(
                data[:MAX_GREP_FILE_BYTES], line_regex, text_regex, timing.clock, shown_file, out
            )
        except OutOfTime:
            timing.stopped_at = shown_file
            break
        except TooSlow:
            timing.slow.append(shown_file)
            continue
        if not found:
            more = True
            break
    text = "\n".join(out) if out else prompts.notice("grep_no_matches", pattern=pattern, path=shown_base)
    if more:
        text += "\n" + prompts.notice("grep_truncated", limit=MAX_MATCHES)
    if too_large:
        text += "\n" + prompts.notice(
            "grep_skipped_large", count=too_large, limit_mb=MAX_GREP_FILE_BYTES // 2**20
        )
    if grown:
        text += "\n" + prompts.notice("grep_grew", count=grown, limit_mb=MAX_GREP_FILE_BYTES // 2**20)
    text += walk.walk_notes(state)
    text = "\n".join([text, *timing.notes("files")])
    summary = f"{len(out)}{'+' if more else ''} match{'es' if len(out) != 1 else ''}"
    if timing.stopped_at is not None:
        summary += ", stopped at the time limit"
    return ToolResult(text, summary)


def _read_for_grep(file: Path) -> bytes | None:
    """The bytes to search: None when too large; b"" when binary, unreadable or not a regular file.

    At most one byte more than MAX_GREP_FILE_BYTES is read, however fast the file grows meanwhile.
    """
    try:
        # Non-blocking open: a file swapped for a FIFO mid-walk must not hang the search.
        with os.fdopen(os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                return b""
            if info.st_size > MAX_GREP_FILE_BYTES:
                return None
            head = handle.read(SNIFF_BYTES)
            if looks_binary(head):
                return b""
            return head + handle.read(MAX_GREP_FILE_BYTES + 1 - len(head))
    except OSError:
        return b""  # unreadable or vanished while searching: skip it


def _grep_text(
    data: bytes, line_regex: Any, text_regex: Any | None, clock: SearchClock, shown: str, out: list[str]
) -> bool:
    """Append `shown:line:text` for each matching line; False once the match cap is hit."""
    text = data.decode("utf-8", "replace")
    if text and not text.endswith("\n"):
        text += "\n"  # so that every line, the last one too, ends with a line break
    if "\r" in text:
        text = _CR_BEFORE_NEWLINE.sub("\n", text)
    number, start = 1, 0
    while start < len(text):
        if text_regex is not None:  # jump to the next line that may match
            candidate = clock.run(text_regex.search, text, start)
            if candidate is None:
                return True
            line_start = text.rfind("\n", 0, candidate.start()) + 1
            if line_start == len(text):  # an empty match after the last line ending
                return True
            number += text.count("\n", start, line_start)
            start = line_start
        end = text.index("\n", start)
        line = text[start:end]
        match = clock.run(line_regex.search, line)
        if match is not None:
            if len(out) >= MAX_MATCHES:
                return False
            out.append(f"{shown}:{number}:{_clip(line, match.start())}")
        number, start = number + 1, end + 1
    return True


def _clip(line: str, start: int) -> str:
    """A long line cut to MAX_MATCH_LINE_CHARS, keeping the match in view."""
    if len(line) <= MAX_MATCH_LINE_CHARS:
        return line
    begin = max(0, start - MATCH_CONTEXT_CHARS)
    piece = line[begin : begin + MAX_MATCH_LINE_CHARS]
    return ("…" if begin else "") + piece + ("…" if begin + MAX_MATCH_LINE_CHARS < len(line) else "")
