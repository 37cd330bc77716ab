"""Every read for display is size-capped, the bytes read to reach an offset too: read_file reads
at most MAX_SCAN_BYTES of a file per call (the lines before its offset and the rest of lines
too long to show), then stops and says so. The ways around a cap on what is shown: a sparse file
of 40 GB whose first 12 KB is text, one endless line, an offset far into a file of short lines.
The reader is `tools/numbered_read.py`. The search walk (`tools/walk.py`) likewise reads no
folder past its cap of entries: a folder of millions is not read whole to be sorted first."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_claude.tools import numbered_read, walk
from mini_claude.tools.numbered_read import read_numbered
from tests.adversarial.cases import case
from tests.kit import empty_files, must_finish_within
from tests.tool_harness import Tools

SPARSE_SIZE = 40 << 30
SCAN_LIMIT = numbered_read.MAX_SCAN_BYTES // 2**20


def _sparse_file(path: Path) -> Path:
    with open(path, "wb") as handle:
        handle.write(b"hello\n" * 2000)
        handle.truncate(SPARSE_SIZE)  # 40 GB of NULs, no line break: one endless line
    return path


@case("crashes", "offset past the text of a 40 GB sparse file: stops at the scan limit and says where")
def test_an_offset_into_a_sparse_file_stops_at_the_scan_limit(project_dir: Path) -> None:
    _sparse_file(project_dir / "s.txt")

    with must_finish_within(20):  # reading to the end would take minutes
        result = Tools(project_dir, "ask").run("read_file", file_path="s.txt", offset=3000)

    assert result.is_error
    assert result.content == (
        f"offset=3000 is further into s.txt than read_file reads: at most {SCAN_LIMIT} MB of a file per "
        "call, and those hold 2,000 lines and the start of line 2,001. Use grep_search to find what you "
        "need, or run_shell (sed -n, tail -c) to read that far."
    )


@case("crashes", "reading the endless line of a sparse file: shown cut, then output stops and says why")
def test_the_endless_line_itself_is_cut_at_the_scan_limit(project_dir: Path) -> None:
    _sparse_file(project_dir / "s.txt")

    with must_finish_within(20):
        result = Tools(project_dir, "ask").run("read_file", file_path="s.txt", offset=1999)

    lines = result.content.splitlines()
    assert lines[:2] == ["  1999\thello", "  2000\thello"] and lines[2].startswith("  2001\t\x00")
    assert f"[line cut: it goes on past the {SCAN_LIMIT} MB read_file reads per call" in lines[2]
    assert lines[3].startswith("… output stopped at line 2001: read_file reads at most")


@pytest.fixture
def small_scan_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    """A scan limit of 1 MB, so that a file of short lines past it is quick to write."""
    monkeypatch.setattr(numbered_read, "MAX_SCAN_BYTES", 1 << 20)
    return 1 << 20


@case("crashes", "an offset past the scan limit in a file of short lines: refused with the lines it holds")
def test_an_offset_far_into_short_lines_is_refused(project_dir: Path, small_scan_limit: int) -> None:
    (project_dir / "log.txt").write_bytes(b"0123456789abcde\n" * 200_000)  # 3.2 MB, 16 bytes a line

    result = Tools(project_dir, "ask").run("read_file", file_path="log.txt", offset=150_000)

    assert result.is_error and "those hold 65,536 lines." in result.content
    reached = Tools(project_dir, "ask").run("read_file", file_path="log.txt", offset=65_000, limit=3)
    assert reached.content.splitlines()[:3] == [f" {n}\t0123456789abcde" for n in (65000, 65001, 65002)]


@case("crashes", "lines shown up to the scan limit, then a note: the limit counts what the offset skipped")
def test_output_stops_where_the_scan_limit_is_used_up(project_dir: Path, small_scan_limit: int) -> None:
    (project_dir / "log.txt").write_bytes(b"0123456789abcde\n" * 200_000)

    result = Tools(project_dir, "ask").run("read_file", file_path="log.txt", offset=65_000)

    lines = result.content.splitlines()
    assert lines[0] == " 65000\t0123456789abcde" and lines[-2] == " 65536\t0123456789abcde"
    assert lines[-1].startswith("… output stopped at line 65536: read_file reads at most 1 MB")


# --- the reader against a plain split, for any file and offset ---------------------------------------

file_lines = st.lists(
    st.one_of(st.text("ab\r", max_size=5), st.just("x" * 9000), st.just("é" * 2500)), max_size=20
)


@case("crashes", "any file and offset: lines counted in chunks are numbered as a plain split numbers them")
@settings(max_examples=200, deadline=None)
@given(lines=file_lines, final_break=st.booleans(), first=st.integers(1, 25), count=st.integers(1, 5))
def test_the_reader_numbers_lines_as_a_split_does(
    tmp_path_factory, lines: list[str], final_break: bool, first: int, count: int
) -> None:
    data = ("\n".join(lines) + ("\n" if final_break and lines else "")).encode()
    path = tmp_path_factory.mktemp("read") / "f.txt"
    path.write_bytes(data)
    with open(path, "rb") as handle:
        read = read_numbered(handle, first, count)

    every = data.split(b"\n")
    if every[-1] == b"":
        every.pop()
    numbers = [int(line.split("\t")[0]) for line in read.lines]
    assert numbers == list(range(first, min(first + count, len(every) + 1)))
    for number, line in zip(numbers, read.lines, strict=True):
        shown = line.split("\t", 1)[1].rstrip("\n")
        raw = every[number - 1].decode().removesuffix("\r")
        assert shown == raw or (shown.startswith(raw[:2000]) and "[line cut:" in shown)
    if not read.lines:
        assert read.last_seen == len(every) and read.stop is None


# --- a folder of many entries: the walk reads no more of it than its cap ---------------------------

WALK_CAP = 1_000
CROWDED_ENTRIES = 40_000


@case("crashes", "a folder of 40,000 entries with the walk's cap at 1,000: read up to the cap, not whole")
def test_a_crowded_folder_is_read_only_up_to_the_walk_cap(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walk, "MAX_SCANNED_ENTRIES", WALK_CAP)
    tools = Tools(project_dir, "ask")
    tools.run("list_files", pattern="**/*")  # once before: imports and compiled globs are not counted
    crowded = project_dir / "crowded"
    crowded.mkdir()
    empty_files(crowded, (f"f{number:05d}" for number in range(CROWDED_ENTRIES)))

    tracemalloc.start()
    try:
        result = tools.run("list_files", pattern="**/*")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert f"stopped after looking at {WALK_CAP} entries" in result.content
    # 40,000 entries read and sorted hold some 12 MB; the cap's worth, a fortieth of that.
    assert peak < 2 << 20, peak
