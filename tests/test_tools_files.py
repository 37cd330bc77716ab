"""read_file, write_file and edit_file, driven through the registry with real permissions."""

from __future__ import annotations

import os
import stat
import time
import tracemalloc
from pathlib import Path

import pytest

from mini_claude.safety.permissions import Permissions
from mini_claude.tools.base import ToolContext
from mini_claude.tools.files import MAX_LINE_CHARS, MAX_LINES, MAX_READ_BYTES
from tests.kit import must_finish_within
from tests.tool_harness import RecordingMemoryWriter, ScriptedUser, make_ctx, run_tool


@pytest.fixture
def ctx(project_dir: Path) -> ToolContext:
    return make_ctx(project_dir)[0]


# --- read_file ---------------------------------------------------------------------------


def test_read_numbers_lines_like_cat_n(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "a.txt").write_text("alpha\nbeta\r\n\ngamma")
    result = run_tool(ctx, "read_file", file_path="a.txt")
    assert not result.is_error
    assert result.content == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"
    assert result.summary == "4 lines"


def test_read_absolute_path_inside_project(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "a.txt").write_text("x\n")
    assert run_tool(ctx, "read_file", file_path=str(project_dir / "a.txt")).content == "     1\tx"


@pytest.mark.parametrize(
    ("setup", "name", "expected"),
    [
        (lambda p: None, "missing.txt", "File not found: missing.txt"),
        (lambda p: (p / "sub").mkdir(), "sub", "sub is a directory"),
        (lambda p: (p / "f").write_bytes(b"PK\x03\x04\x00\x00binary"), "f", "binary file"),
        (lambda p: (p / "f").write_bytes(bytes(range(128, 256)) * 8), "f", "binary file"),
        (lambda p: (p / "f").write_text("x"), "f/inner.txt", "File not found: f/inner.txt"),
    ],
    ids=["missing", "directory", "nul-bytes", "not-utf8", "parent-is-a-file"],
)
def test_read_errors_are_one_clear_line(
    ctx: ToolContext, project_dir: Path, setup, name: str, expected: str
) -> None:
    setup(project_dir)
    result = run_tool(ctx, "read_file", file_path=name)
    assert result.is_error
    assert expected in result.content
    assert "\n" not in result.content


def test_read_fifo_is_refused_without_blocking(ctx: ToolContext, project_dir: Path) -> None:
    os.mkfifo(project_dir / "pipe")
    with must_finish_within(5):
        result = run_tool(ctx, "read_file", file_path="pipe")
    assert result.is_error
    assert "named pipe" in result.content


def test_read_device_is_refused(ctx: ToolContext) -> None:
    with must_finish_within(5):
        result = run_tool(ctx, "read_file", file_path="/dev/zero")
    # /dev is outside the project: the prompt comes first, and the scripted user says no.
    assert result.is_error
    bypass = ToolContext(ctx.project_dir, Permissions(ctx.project_dir, mode="bypass", ask=None))
    with must_finish_within(5):
        result = run_tool(bypass, "read_file", file_path="/dev/zero")
    assert result.is_error
    assert "character device" in result.content


def test_mostly_text_with_a_bad_byte_is_decoded_with_replacement(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "latin1.txt").write_bytes(b"caf\xe9 au lait\nplain line\n")
    result = run_tool(ctx, "read_file", file_path="latin1.txt")
    assert not result.is_error
    assert "caf\ufffd au lait" in result.content


def test_empty_file(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "empty.txt").touch()
    result = run_tool(ctx, "read_file", file_path="empty.txt")
    assert not result.is_error
    assert "empty" in result.content


def test_paging_with_offset_and_limit(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))

    first = run_tool(ctx, "read_file", file_path="big.txt")
    lines = first.content.splitlines()
    assert lines[0] == "     1\tline 1"
    assert lines[MAX_LINES - 1] == f"  {MAX_LINES}\tline {MAX_LINES}"
    assert lines[-1] == f"… file continues: call read_file with offset={MAX_LINES + 1} to read more."

    page = run_tool(ctx, "read_file", file_path="big.txt", offset=2001, limit=10)
    assert page.content.splitlines()[0] == "  2001\tline 2001"
    assert page.content.splitlines()[9] == "  2010\tline 2010"
    assert "offset=2011" in page.content

    tail = run_tool(ctx, "read_file", file_path="big.txt", offset=4999)
    assert tail.content == "  4999\tline 4999\n  5000\tline 5000"  # the end: no "continues" note

    clamped = run_tool(ctx, "read_file", file_path="big.txt", limit=100_000)
    assert len(clamped.content.splitlines()) == MAX_LINES + 1

    past = run_tool(ctx, "read_file", file_path="big.txt", offset=6000)
    assert past.is_error
    assert "past the end" in past.content
    assert "5000 lines" in past.content


def test_output_is_capped_at_256_kb_with_a_note_to_continue(ctx: ToolContext, project_dir: Path) -> None:
    row = "x" * 300
    (project_dir / "wide.txt").write_text("".join(f"{n:05d}{row}\n" for n in range(1, 2001)))
    result = run_tool(ctx, "read_file", file_path="wide.txt")
    body, note = result.content.rsplit("\n", 1)
    assert len(body.encode()) <= MAX_READ_BYTES
    assert "256 KB" in note
    next_offset = int(note.split("offset=")[1].split()[0])
    assert body.splitlines()[-1].split("\t")[0].strip() == str(next_offset - 1)
    following = run_tool(ctx, "read_file", file_path="wide.txt", offset=next_offset, limit=1)
    assert following.content.startswith(f"{next_offset:>6}\t{next_offset:05d}")


def test_very_long_line_is_cut_with_a_marker(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "min.js").write_text("a" * 50_000 + "\nnext\n")
    result = run_tool(ctx, "read_file", file_path="min.js")
    first, second = result.content.splitlines()[:2]
    assert first.startswith("     1\t" + "a" * MAX_LINE_CHARS + " … [line cut: 48000 more bytes")
    assert second == "     2\tnext"


def test_huge_file_is_never_loaded_whole(ctx: ToolContext, project_dir: Path) -> None:
    huge = project_dir / "huge.log"
    with huge.open("w") as handle:
        handle.write("".join(f"entry {n}\n" for n in range(10_000)))
        handle.truncate(200 * 1024 * 1024)  # sparse: 200 MB on paper, nothing on disk
    tracemalloc.start()
    started = time.monotonic()
    try:
        result = run_tool(ctx, "read_file", file_path="huge.log", offset=100, limit=5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.content.splitlines()[0] == "   100\tentry 99"
    assert peak < 5 * 1024 * 1024
    assert time.monotonic() - started < 2


# --- write_file --------------------------------------------------------------------------


def test_write_creates_parents_and_reports(ctx: ToolContext, project_dir: Path) -> None:
    result = run_tool(ctx, "write_file", file_path="sub/dir/f.txt", content="hello\nworld\n")
    assert result.content == "Wrote 2 lines (12 bytes) to sub/dir/f.txt (new file)."
    assert result.summary == "created, 2 lines"
    assert (project_dir / "sub/dir/f.txt").read_text() == "hello\nworld\n"

    again = run_tool(ctx, "write_file", file_path="sub/dir/f.txt", content="é")
    assert again.content == "Wrote 1 lines (2 bytes) to sub/dir/f.txt (replaced its previous content)."
    assert (project_dir / "sub/dir/f.txt").read_bytes() == "é".encode()


def test_write_is_atomic_preserves_mode_and_leaves_no_temp_files(ctx: ToolContext, project_dir: Path) -> None:
    script = project_dir / "run.sh"
    script.write_text("#!/bin/sh\necho old\n")
    script.chmod(0o754)
    run_tool(ctx, "write_file", file_path="run.sh", content="#!/bin/sh\necho new\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o754
    assert script.read_text().endswith("echo new\n")
    assert sorted(os.listdir(project_dir)) == ["run.sh"]


def test_new_file_gets_umask_mode_not_tempfile_0600(ctx: ToolContext, project_dir: Path) -> None:
    old = os.umask(0o022)
    try:
        run_tool(ctx, "write_file", file_path="new.txt", content="x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((project_dir / "new.txt").stat().st_mode) == 0o644


def test_write_failure_is_an_error_and_leaves_no_temp_files(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "blocker").write_text("a file, not a folder")
    result = run_tool(ctx, "write_file", file_path="blocker/inner.txt", content="x")
    assert result.is_error
    assert result.content.startswith("Could not write blocker/inner.txt")
    assert sorted(os.listdir(project_dir)) == ["blocker"]


def test_write_through_symlink_keeps_the_link(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "real.txt").write_text("old")
    (project_dir / "link.txt").symlink_to("real.txt")
    run_tool(ctx, "write_file", file_path="link.txt", content="new")
    assert (project_dir / "link.txt").is_symlink()
    assert (project_dir / "real.txt").read_text() == "new"


def test_write_refuses_directory_and_fifo(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "folder").mkdir()
    os.mkfifo(project_dir / "pipe")
    with must_finish_within(5):
        to_dir = run_tool(ctx, "write_file", file_path="folder", content="x")
        to_fifo = run_tool(ctx, "write_file", file_path="pipe", content="x")
    assert to_dir.is_error and "is a directory" in to_dir.content
    assert to_fifo.is_error and "named pipe" in to_fifo.content
    assert stat.S_ISFIFO((project_dir / "pipe").stat().st_mode)


# --- edit_file ---------------------------------------------------------------------------


def test_edit_replaces_a_unique_match(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "m.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = run_tool(ctx, "edit_file", file_path="m.py", old_string="b = 2", new_string="b = 20")
    assert not result.is_error
    assert result.content == "Edited m.py: replaced 1 occurrence(s), the first at line 2."
    assert (project_dir / "m.py").read_text() == "a = 1\nb = 20\nc = 3\n"


def test_edit_not_found_and_ambiguous_say_how_to_fix(ctx: ToolContext, project_dir: Path) -> None:
    path = project_dir / "m.py"
    path.write_text("x = 1\nx = 1\nx = 1\n")
    missing = run_tool(ctx, "edit_file", file_path="m.py", old_string="y = 1", new_string="y = 2")
    assert missing.is_error
    assert "0 matches" in missing.content and "line-number prefix" in missing.content

    ambiguous = run_tool(ctx, "edit_file", file_path="m.py", old_string="x = 1", new_string="x = 2")
    assert ambiguous.is_error
    assert "matches 3 places" in ambiguous.content and "replace_all" in ambiguous.content
    assert path.read_text() == "x = 1\nx = 1\nx = 1\n"

    everywhere = run_tool(
        ctx, "edit_file", file_path="m.py", old_string="x = 1", new_string="x = 2", replace_all=True
    )
    assert "replaced 3 occurrence(s)" in everywhere.content
    assert path.read_text() == "x = 2\nx = 2\nx = 2\n"


def test_edit_same_strings_is_an_error(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "m.py").write_text("x")
    result = run_tool(ctx, "edit_file", file_path="m.py", old_string="x", new_string="x")
    assert result.is_error and "identical" in result.content


def test_edit_with_empty_old_string_creates_a_file(ctx: ToolContext, project_dir: Path) -> None:
    created = run_tool(ctx, "edit_file", file_path="pkg/new.py", old_string="", new_string="print(1)\n")
    assert created.content == "Created pkg/new.py with 1 lines."
    assert (project_dir / "pkg/new.py").read_text() == "print(1)\n"

    refused = run_tool(ctx, "edit_file", file_path="pkg/new.py", old_string="", new_string="other\n")
    assert refused.is_error and "already has content" in refused.content
    assert (project_dir / "pkg/new.py").read_text() == "print(1)\n"


def test_edit_missing_file_and_binary_file(ctx: ToolContext, project_dir: Path) -> None:
    (project_dir / "blob.bin").write_bytes(b"\x00\x01abc")
    missing = run_tool(ctx, "edit_file", file_path="nope.py", old_string="a", new_string="b")
    binary = run_tool(ctx, "edit_file", file_path="blob.bin", old_string="abc", new_string="xyz")
    assert missing.is_error and "File not found: nope.py" in missing.content
    assert binary.is_error and "binary" in binary.content


def test_edit_keeps_crlf_stray_bytes_and_mode(ctx: ToolContext, project_dir: Path) -> None:
    path = project_dir / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree \xff\r\n")
    path.chmod(0o600)
    result = run_tool(ctx, "edit_file", file_path="win.txt", old_string="one\ntwo", new_string="1\n2")
    assert not result.is_error
    assert path.read_bytes() == b"1\r\n2\r\nthree \xff\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(os.listdir(project_dir)) == ["win.txt"]


# --- the memory folder goes through the memory writer ---------------------------------------


def test_writes_into_memory_are_handed_to_the_memory_writer_without_asking(
    project_dir: Path, tmp_path: Path
) -> None:
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    (memory_dir / "note.md").write_text("---\nname: x\n---\nold fact\n")
    memory_writer = RecordingMemoryWriter(memory_dir.resolve())
    user = ScriptedUser()
    permissions = Permissions(project_dir, mode="ask", ask=user, memory_dir=memory_dir)
    ctx = ToolContext(project_dir.resolve(), permissions, memory_writer)

    written = run_tool(ctx, "write_file", file_path=str(memory_dir / "new.md"), content="fresh")
    edited = run_tool(
        ctx, "edit_file", file_path=str(memory_dir / "note.md"), old_string="old", new_string="new"
    )

    assert (written.content, edited.content) == ("saved memory new.md", "saved memory note.md")
    assert memory_writer.saved == [
        (memory_dir.resolve() / "new.md", "fresh", False),
        (memory_dir.resolve() / "note.md", "---\nname: x\n---\nnew fact\n", True),
    ]
    assert user.questions == []
    assert not (memory_dir / "new.md").exists()  # the memory writer decides what lands on disk
    assert (memory_dir / "note.md").read_text() == "---\nname: x\n---\nold fact\n"
