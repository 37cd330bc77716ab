"""The search tools: list_files (glob) and grep_search (regex over file contents), in pure Python.

Both walk the tree in name order, skip VCS, dependency and cache folders, and cap their output.
A walk that reaches the home folder skips its dot entries (~/.ssh, ~/.aws …) and says so: reading
those asks every time, and a search must not be the way around that question.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mini_claude import prompts
from mini_claude.paths import display_path, resolve_path, visible_path, written_path
from mini_claude.tools.base import ToolContext, ToolError, ToolResult, count_noun
from mini_claude.tools.files import SNIFF_BYTES, file_kind, looks_binary

# Only version control, dependency and cache folders: never build output the user may care about.
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
MAX_LIST_ENTRIES = 500
MAX_MATCHES = 200
MAX_MATCH_LINE_CHARS = 300
MATCH_CONTEXT_CHARS = 60  # shown before the match when a long line is clipped
MAX_SCANNED_ENTRIES = 200_000  # a walk stops here (e.g. someone searched the whole home folder)
MAX_GREP_FILE_BYTES = 10 * 1024 * 1024


@dataclass
class _WalkState:
    hidden_dir: str | None = None  # the folder whose dot entries are skipped (home), if any
    scanned: int = 0
    stopped: bool = False
    hidden: int = 0  # dot entries skipped there (not named: their names say what they hold)


def list_files(ctx: ToolContext, pattern: str, path: str | None = None) -> ToolResult:
    base, shown_base = _search_root(ctx, "list_files", path, want_dir=True)
    pattern = pattern.strip().removeprefix("./")
    if not pattern:
        raise ToolError(prompts.notice("list_pattern_empty"))
    if os.path.isabs(pattern) or ".." in pattern.split("/"):
        raise ToolError(prompts.notice("list_pattern_relative", pattern=pattern))
    regex = re.compile(glob_to_regex(pattern), re.DOTALL)
    max_depth = None if "**" in pattern else pattern.count("/") + 1
    state = _walk_state(ctx)
    shown: list[str] = []
    total = 0
    for rel, entry in _walk(str(base), "", 1, max_depth, state):
        if regex.fullmatch(rel):
            total += 1
            if len(shown) < MAX_LIST_ENTRIES:
                suffix = "/" if entry.is_dir(follow_symlinks=False) else ""
                shown.append(_show(ctx, base, rel) + suffix)
    if not shown:
        text = prompts.notice("list_no_matches", pattern=pattern, path=shown_base)
    else:
        text = "\n".join(shown)
        if total > len(shown):
            text += "\n" + prompts.notice("list_truncated", shown=len(shown), omitted=total - len(shown))
    text += _walk_notes(state)
    return ToolResult(text, count_noun(total, "path"))


def grep_search(
    ctx: ToolContext, pattern: str, path: str | None = None, include: str | None = None
) -> ToolResult:
    try:
        regex = re.compile(pattern)
    except re.error as error:
        raise ToolError(prompts.notice("grep_bad_regex", pattern=pattern, error=error)) from None
    base, shown_base = _search_root(ctx, "grep_search", path, want_dir=False)
    name_filter = re.compile(glob_to_regex(include), re.DOTALL) if include else None
    state = _walk_state(ctx)
    if base.is_dir():
        candidates = (
            (rel, Path(entry.path))
            for rel, entry in _walk(str(base), "", 1, None, state)
            if entry.is_file(follow_symlinks=False)  # like ripgrep: symlinks are not followed
            and (name_filter is None or name_filter.fullmatch(entry.name))
        )
    else:
        candidates = iter([(base.name, base)])

    out: list[str] = []
    more = False
    too_large = 0
    for rel, file in candidates:
        shown_file = _show(ctx, base, rel) if base.is_dir() else shown_base
        found, size_skipped = _grep_file(file, regex, shown_file, out)
        too_large += size_skipped
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
    text += _walk_notes(state)
    summary = f"{len(out)}{'+' if more else ''} match{'es' if len(out) != 1 else ''}"
    return ToolResult(text, summary)


def glob_to_regex(pattern: str) -> str:
    """A glob as a regex over '/'-separated relative paths: `*`, `?`, `[...]`, `{a,b}`, `**/`."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/"):
            after = i + 2
            if after == len(pattern):
                out.append(".*")
                i = after
                continue
            if pattern[after] == "/":
                out.append("(?:.*/)?")  # zero or more folders
                i = after + 1
                continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            body = "^" + body[1:] if body.startswith("!") else body.replace("^", "\\^", 1)
            out.append(f"[{body}]")
            i = end + 1
            continue
        elif char == "{" and (end := pattern.find("}", i)) != -1 and "," in pattern[i:end]:
            options = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(glob_to_regex(option) for option in options) + ")")
            i = end + 1
            continue
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _search_root(ctx: ToolContext, tool: str, path: str | None, *, want_dir: bool) -> tuple[Path, str]:
    base = resolve_path(path or ".", ctx.project_dir)
    # Inside the project too: the project may be ~ itself, or a folder inside ~/.config.
    ctx.permissions.check_read(tool, base, written=written_path(path or ".", ctx.project_dir))
    shown = display_path(base, ctx.project_dir)
    try:
        mode = os.stat(base).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError(prompts.notice("search_path_not_found", path=shown)) from None
    except OSError as error:
        raise ToolError(prompts.notice("file_unreadable", path=shown, error=error.strerror)) from None
    if want_dir and not stat.S_ISDIR(mode):
        raise ToolError(prompts.notice("list_path_not_dir", path=shown))
    if not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
        raise ToolError(prompts.notice("file_not_regular", path=shown, kind=file_kind(mode)))
    return base, shown


def _walk_state(ctx: ToolContext) -> _WalkState:
    hidden = ctx.permissions.hidden_from_search()
    return _WalkState(hidden_dir=str(hidden) if hidden is not None else None)


def _walk_notes(state: _WalkState) -> str:
    """What the model must know about a walk that did not see everything: "" when it did."""
    notes = ""
    if state.hidden and state.hidden_dir is not None:
        home = visible_path(state.hidden_dir)
        notes += "\n" + prompts.notice("walk_skipped_home_dotfiles", count=state.hidden, home=home)
    if state.stopped:
        notes += "\n" + prompts.notice("walk_stopped", limit=MAX_SCANNED_ENTRIES)
    return notes


def _walk(
    folder: str, prefix: str, depth: int, max_depth: int | None, state: _WalkState
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(path relative to the start, entry) in name order, depth first, skipping SKIPPED_DIRS and
    the home folder's dot entries (unless permitted). `folder` is a real path: the walk starts at
    a resolved folder and never follows a symlink, so comparing it with home by string is exact."""
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return  # unreadable folder: search what we can
    in_hidden_dir = folder == state.hidden_dir
    for entry in entries:
        if state.scanned >= MAX_SCANNED_ENTRIES:
            state.stopped = True
            return
        state.scanned += 1
        if in_hidden_dir and entry.name.startswith("."):
            state.hidden += 1
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and entry.name in SKIPPED_DIRS:
            continue
        rel = prefix + entry.name
        yield rel, entry
        if is_dir and (max_depth is None or depth < max_depth):
            yield from _walk(entry.path, rel + "/", depth + 1, max_depth, state)


def _show(ctx: ToolContext, base: Path, rel: str) -> str:
    """A path found under `base`, as the model should pass it back (relative to the project), on
    one line whatever characters its name holds."""
    if base == ctx.project_dir:  # the common case, once per file searched: keep it cheap
        return visible_path(rel)
    return display_path(base / rel, ctx.project_dir)


def _grep_file(file: Path, regex: re.Pattern[str], shown: str, out: list[str]) -> tuple[bool, int]:
    """Append `shown:line:text` for matches; returns (False if the match cap was hit, 1 if too large)."""
    try:
        # Non-blocking open: a file swapped for a FIFO mid-walk must not hang the search.
        with os.fdopen(os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_GREP_FILE_BYTES:
                return True, 1
            if looks_binary(handle.read(SNIFF_BYTES)):
                return True, 0
            handle.seek(0)
            for number, raw in enumerate(handle, 1):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                match = regex.search(line)
                if match is None:
                    continue
                if len(out) >= MAX_MATCHES:
                    return False, 0
                out.append(f"{shown}:{number}:{_clip(line, match.start())}")
    except OSError:
        pass  # unreadable or vanished while searching: skip it
    return True, 0


def _clip(line: str, start: int) -> str:
    """A long line cut to MAX_MATCH_LINE_CHARS, keeping the match in view."""
    if len(line) <= MAX_MATCH_LINE_CHARS:
        return line
    begin = max(0, start - MATCH_CONTEXT_CHARS)
    piece = line[begin : begin + MAX_MATCH_LINE_CHARS]
    return ("…" if begin else "") + piece + ("…" if begin + MAX_MATCH_LINE_CHARS < len(line) else "")
