"""The file tools: read_file (numbered lines, paged), write_file and edit_file (atomic writes).

Writes into the memory folder are handed to the memory writer instead (`ctx.memory_writer.save`).
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path
from typing import BinaryIO

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.paths import display_path, resolve_path, visible_path, written_path
from mini_claude.safety import change_preview
from mini_claude.safety.change_preview import ChangePreview
from mini_claude.tools import numbered_read
from mini_claude.tools.base import ToolContext, ToolResult, count_noun
from mini_claude.tools.file_kinds import SNIFF_BYTES, open_regular, sniff, wide_text_as_utf8
from mini_claude.tools.numbered_read import MAX_LINE_CHARS, MAX_LINES, MAX_READ_BYTES, read_numbered

__all__ = ["MAX_LINES", "MAX_LINE_CHARS", "MAX_READ_BYTES", "edit_file", "read_file", "write_file"]

MAX_EDIT_BYTES = 8 * 1024 * 1024  # edit_file loads the whole file


def read_file(
    ctx: ToolContext, file_path: str, offset: int | None = None, limit: int | None = None
) -> ToolResult:
    path = resolve_path(file_path, ctx.project_dir)
    ctx.permissions.check_read("read_file", path, written=written_path(file_path, ctx.project_dir))
    shown = display_path(path, ctx.project_dir)
    first = max(1, offset or 1)
    count = min(MAX_LINES, max(1, limit or MAX_LINES))
    notes: list[str] = []
    with open_regular(path, shown) as handle:
        head = handle.read(SNIFF_BYTES)
        sniffed = sniff(head)
        if sniffed.text is None:
            raise ToolError(prompts.notice("file_binary", path=shown))
        source: BinaryIO = handle
        if sniffed.encoding != "UTF-8":  # UTF-16 or UTF-32: decoded whole, read as UTF-8
            source, warning = wide_text_as_utf8(handle, sniffed.encoding, shown)
            notes.append(
                prompts.notice("read_decoded", encoding=sniffed.encoding, warning=warning or "").strip()
            )
        else:
            handle.seek(len(codecs.BOM_UTF8) if head.startswith(codecs.BOM_UTF8) else 0)
        read = read_numbered(source, first, count)
    if read.undecodable_lines:
        notes.append(prompts.notice("read_not_utf8", lines=count_noun(read.undecodable_lines, "line")))
    lines, stop = read.lines, read.stop
    if not lines:
        if read.last_seen == 0 and stop is None:
            return ToolResult(prompts.notice("file_empty", path=shown), "empty file")
        if stop == "scan":
            raise ToolError(
                prompts.notice(
                    "read_offset_past_scan_limit",
                    path=shown,
                    offset=first,
                    limit_mb=numbered_read.MAX_SCAN_BYTES // 2**20,
                    lines=_lines_within(read.whole_lines, read.last_seen),
                )
            )
        raise ToolError(
            prompts.notice("read_offset_past_end", path=shown, offset=first, lines=read.last_seen)
        )
    ctx.files_read.append(shown)
    body = "".join(lines)
    last = first + len(lines) - 1
    if stop == "lines":
        body += prompts.notice("read_more_lines", next=last + 1)
    elif stop == "bytes":
        body += prompts.notice("read_more_bytes", limit_kb=MAX_READ_BYTES // 1024, next=last + 1)
    elif stop == "scan":
        body += prompts.notice(
            "read_stopped_at_scan_limit", limit_mb=numbered_read.MAX_SCAN_BYTES // 2**20, line=last
        )
    summary = f"lines {first}-{last}" if first > 1 or stop else count_noun(len(lines), "line")
    if notes:  # the model and the user both learn the file was not plain UTF-8
        body = body.rstrip("\n") + "\n" + "\n".join(notes)
        summary += f", {sniffed.encoding}" if sniffed.encoding != "UTF-8" else ", not all UTF-8"
    return ToolResult(body.rstrip("\n"), summary)


def write_file(ctx: ToolContext, file_path: str, content: str) -> ToolResult:
    _refuse_folder_path(file_path)
    path = resolve_path(file_path, ctx.project_dir)
    if ctx.memory_writer is not None and ctx.memory_writer.owns(path):
        return ctx.memory_writer.save(path, content, edit=False)
    shown = display_path(path, ctx.project_dir)
    ctx.permissions.check_write(
        "write_file",
        path,
        written=written_path(file_path, ctx.project_dir),
        preview=lambda: _write_preview(path, shown, content),
    )
    _check_write_target(path, shown)
    before = _text_before(path, shown)
    created = _write(ctx, path, content, shown)
    lines, size = count_lines(content), len(content.encode("utf-8", "surrogateescape"))
    key = "write_created" if created else "write_updated"
    summary = f"{'created' if created else 'updated'}, {count_noun(lines, 'line')}"
    detail = change_preview.collapsed_diff(before, content) if before is not None else ()
    return ToolResult(prompts.notice(key, path=shown, lines=lines, bytes=size), summary, detail=detail)


def edit_file(
    ctx: ToolContext, file_path: str, old_string: str, new_string: str, replace_all: bool = False
) -> ToolResult:
    _refuse_folder_path(file_path)
    path = resolve_path(file_path, ctx.project_dir)
    if old_string == new_string:
        raise ToolError(prompts.notice("edit_no_change"))
    owned = ctx.memory_writer is not None and ctx.memory_writer.owns(path)
    shown = display_path(path, ctx.project_dir)
    if not owned:
        # The question shows the diff; what it reads reaches only the user, and an edit that
        # cannot apply is reported to the model only after the answer (no oracle on the file).
        ctx.permissions.check_write(
            "edit_file",
            path,
            written=written_path(file_path, ctx.project_dir),
            preview=lambda: _edit_preview(path, shown, old_string, new_string, replace_all),
        )
    if old_string == "":
        return _create_with_edit(ctx, path, shown, new_string, owned=owned)

    # Read again after the answer: the edit applies to the file as it is now, whatever the wait.
    text = _read_text_for_edit(path, shown)
    updated, line, replaced = _apply_edit(text, old_string, new_string, replace_all, shown)
    if owned:
        assert ctx.memory_writer is not None
        return ctx.memory_writer.save(path, updated, edit=True)
    _write(ctx, path, updated, shown)
    summary = count_noun(replaced, "replacement")
    detail = change_preview.collapsed_diff(text, updated)
    return ToolResult(
        prompts.notice("edit_done", path=shown, count=replaced, line=line), summary, detail=detail
    )


def _apply_edit(text: str, old: str, new: str, replace_all: bool, shown: str) -> tuple[str, int, int]:
    """`text` with the edit made, the line of its first place, and how many places changed."""
    found = text.count(old)
    if found == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        # The model writes "\n"; the file uses Windows line endings. Match and keep them.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        found = text.count(old)
    if found == 0:
        raise ToolError(prompts.notice("edit_not_found", path=shown))
    if found > 1 and not replace_all:
        raise ToolError(prompts.notice("edit_ambiguous", path=shown, count=found))
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    line = text.count("\n", 0, text.index(old)) + 1
    return updated, line, found if replace_all else 1


def _edit_preview(path: Path, shown: str, old: str, new: str, replace_all: bool) -> ChangePreview:
    if old == "":
        return change_preview.new_file_preview(new)
    try:
        text = _read_text_for_edit(path, shown)
        updated, _, _ = _apply_edit(text, old, new, replace_all, shown)
    except ToolError as error:  # e.g. the text to replace is not there: said, and asked anyway
        return change_preview.unavailable(str(error))
    return change_preview.edit_preview(text, updated)


def _write_preview(path: Path, shown: str, content: str) -> ChangePreview:
    if not os.path.lexists(path):
        return change_preview.new_file_preview(content)
    try:
        before = _read_text_for_edit(path, shown)
    except ToolError as error:  # binary, too large, not a regular file: no diff, only the new text
        return change_preview.replace_preview(None, content, why_no_diff=str(error))
    return change_preview.replace_preview(before, content)


def _text_before(path: Path, shown: str) -> str | None:
    """A file's text before write_file replaces it, for the diff the user keeps; None when it is
    new, binary, too large or unreadable (the write reports what matters)."""
    if not os.path.isfile(path):
        return None
    try:
        return _read_text_for_edit(path, shown)
    except (ToolError, OSError):
        return None


# --- helpers shared by the three tools ----------------------------------------------------


def count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _lines_within(whole: int, seen: int) -> str:
    """What the scanned part of a file holds: "2,000 lines and the start of line 2,001"."""
    held = f"{whole:,} line{'s' if whole != 1 else ''}"
    return held + (f" and the start of line {whole + 1:,}" if seen > whole else "")


def _read_text_for_edit(path: Path, shown: str) -> str:
    with open_regular(path, shown) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_EDIT_BYTES:
            raise ToolError(
                prompts.notice(
                    "edit_too_large",
                    path=shown,
                    size_mb=round(size / 2**20, 1),
                    limit_mb=MAX_EDIT_BYTES // 2**20,
                )
            )
        data = handle.read(MAX_EDIT_BYTES + 1)
    sniffed = sniff(data[:SNIFF_BYTES])
    if sniffed.text is not None and sniffed.encoding != "UTF-8":
        raise ToolError(prompts.notice("edit_wide_text", path=shown, encoding=sniffed.encoding))
    if sniffed.text is None:
        raise ToolError(prompts.notice("file_binary", path=shown))
    # surrogateescape keeps any stray non-UTF-8 bytes exactly as they were when written back.
    return data.decode("utf-8", "surrogateescape")


def _create_with_edit(ctx: ToolContext, path: Path, shown: str, content: str, *, owned: bool) -> ToolResult:
    """Empty old_string: create the file (or fill an empty one) with new_string."""
    if _check_write_target(path, shown) > 0:
        raise ToolError(prompts.notice("edit_empty_old_string", path=shown))
    if owned:
        assert ctx.memory_writer is not None
        return ctx.memory_writer.save(path, content, edit=False)
    _write(ctx, path, content, shown)
    lines = count_lines(content)
    return ToolResult(
        prompts.notice("edit_created", path=shown, lines=lines), f"created, {count_noun(lines, 'line')}"
    )


def _refuse_folder_path(file_path: str) -> None:
    """`dir/`, `dir/.` and `dir/..` name a folder: resolving the path drops that ending, and the
    write would quietly create or replace a file named like the folder."""
    ending = file_path.rsplit("/", 1)[-1]
    if "/" in file_path and ending in ("", ".", ".."):
        shown = visible_path(file_path)
        raise ToolError(prompts.notice("write_path_is_folder", path=shown, ending="/" + ending))


def _check_write_target(path: Path, shown: str) -> int:
    """The size of the file a write replaces (0: none there); ToolError for a folder or a special file."""
    try:
        info = os.stat(path)
    except OSError:
        return 0  # missing (fine: we create it) or unreachable (the write reports it)
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(prompts.notice("file_is_directory", path=shown))
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(prompts.notice("file_not_regular", path=shown, kind=safe_read.kind(info.st_mode)))
    return info.st_size


def _write(ctx: ToolContext, path: Path, content: str, shown: str) -> bool:
    if ctx.before_change is not None:
        ctx.before_change(path)  # a checkpoint: /rewind can give the file back what it holds now
    try:
        return write_atomic(path, content)
    except (OSError, UnicodeEncodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise ToolError(prompts.notice("file_write_failed", path=shown, error=reason)) from None
