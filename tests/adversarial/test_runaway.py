"""Runaway searches and writes that miss their target: a pattern that backtracks for ever, a
pattern that is expensive to compile, globs that are invalid or exponential, huge and growing
files, devices as search paths, and a file path that names a folder. Every search ends within its
time limit (small here, set through the limits in tools/patterns.py), keeps what it found and
says what it gave up on; every bad input gets a clear error, never "internal error"."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from mini_claude.tools import patterns, search
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.kit import must_finish_within
from tests.tool_harness import Tools

MATCH_LIMIT_S = 0.3
SEARCH_LIMIT_S = 1.5
# The test of the whole search's limit: a shorter one, as the search burns a CPU until it (still
# more than three files' worth of the per-file limit).
WHOLE_SEARCH_LIMIT_S = 1.0
# For tests of the per-file limit: on a loaded machine a given-up file can overrun its 0.3 s by
# more than a second, and the whole search must not run out on that before the files after it.
AMPLE_SEARCH_LIMIT_S = 20.0
# Exponential in `regex` as in `re`: both branches match every "a", and the line ends in "?".
BACKTRACKING = r"^(?:needle|(a|a)*!)$"
SLOW_LINE = "a" * 40 + "?"
GROWTH_CAP_BYTES = 8 << 20  # the growing file stops there: a test must not fill the disk


@pytest.fixture(autouse=True)
def small_time_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "MATCH_TIME_LIMIT_S", MATCH_LIMIT_S)
    monkeypatch.setattr(patterns, "SEARCH_TIME_LIMIT_S", SEARCH_LIMIT_S)


@pytest.fixture
def ample_whole_search(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "SEARCH_TIME_LIMIT_S", AMPLE_SEARCH_LIMIT_S)


@pytest.fixture
def tools(project_dir: Path) -> Tools:
    return Tools(project_dir, "bypass")  # nothing is asked: only the limits stop a search


@case("crashes", "the issue's (a+)+$ on a 41-character line: answered at once ('No matches'), no hang")
def test_issue_example_pattern(tools: Tools, project_dir: Path) -> None:
    (project_dir / "line.txt").write_text("a" * 40 + "!\n")

    with must_finish_within(5):
        result = tools.run("grep_search", pattern="(a+)+$")

    assert not result.is_error and result.content.startswith("No matches for (a+)+$")


@case(
    "crashes",
    "a line the pattern backtracks on: that file is given up after the per-file limit, named; "
    "matches before it and in other files are kept",
)
def test_backtracking_line_is_given_up(tools: Tools, project_dir: Path, ample_whole_search: None) -> None:
    (project_dir / "a_first.txt").write_text("needle\n")
    (project_dir / "b_slow.txt").write_text(f"needle\n{SLOW_LINE}\nneedle\n")
    (project_dir / "c_last.txt").write_text("needle\n")

    started = time.monotonic()
    result = tools.run("grep_search", pattern=BACKTRACKING)

    assert time.monotonic() - started < AMPLE_SEARCH_LIMIT_S  # ended by the per-file limit
    lines = result.content.splitlines()
    assert lines[:3] == ["a_first.txt:1:needle", "b_slow.txt:1:needle", "c_last.txt:1:needle"]
    assert lines[3] == (
        f"… gave up on 1 files after the pattern took over {MATCH_LIMIT_S:g} s on each (the first: "
        "b_slow.txt); matches there may be missing. Nested repetition such as (a+)+ or (a|aa)* can "
        "take exponential time: simplify the pattern."
    )


@case("crashes", "many such files: the whole search stops at its time limit and says where; summary says so")
def test_whole_search_stops_at_its_time_limit(
    tools: Tools, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(patterns, "SEARCH_TIME_LIMIT_S", WHOLE_SEARCH_LIMIT_S)
    (project_dir / "a_first.txt").write_text("needle\n")
    for number in range(20):
        (project_dir / f"slow_{number:02}.txt").write_text(f"{SLOW_LINE}\n")

    started = time.monotonic()
    result = tools.run("grep_search", pattern=BACKTRACKING)

    assert time.monotonic() - started < WHOLE_SEARCH_LIMIT_S + 2  # 20 files x the per-file limit: 6 s
    assert result.content.startswith("a_first.txt:1:needle\n")
    assert f"… the search stopped at its {WHOLE_SEARCH_LIMIT_S:g} s time limit (at slow_" in result.content
    assert "so the results are incomplete" in result.content
    assert result.summary == "1 match, stopped at the time limit"


@case("crashes", "one huge line (5 MB): found, shown cut around the match; backtracking on it is given up")
def test_huge_single_line(tools: Tools, project_dir: Path) -> None:
    (project_dir / "min.js").write_text("x" * 2_500_000 + "needle" + "a" * 2_500_000)

    found = tools.run("grep_search", pattern="needle")
    slow = tools.run("grep_search", pattern=r"^(?:zzz|(x|x)*!)$")

    [line] = found.content.splitlines()
    assert line.startswith("min.js:1:…") and "needle" in line and len(line) < 400
    assert "gave up on 1 files" in slow.content and "(the first: min.js)" in slow.content


@case("crashes", "a file growing while it is searched is read up to the size limit, then the search ends")
def test_file_growing_while_searched(
    tools: Tools, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "MAX_GREP_FILE_BYTES", 1 << 20)
    log = project_dir / "app.log"
    log.write_text("needle\n")
    stop = threading.Event()

    def grow() -> None:
        with log.open("a") as handle:
            while not stop.is_set() and handle.tell() < GROWTH_CAP_BYTES:
                handle.write("x" * 4095 + "\n")
                handle.flush()

    writer = threading.Thread(target=grow)
    writer.start()
    try:
        with must_finish_within(10):
            results = [tools.run("grep_search", pattern="needle", path="app.log") for _ in range(20)]
    finally:
        stop.set()
        writer.join()

    # Each search ends: it found the first line, or the file had already passed the limit.
    for result in results:
        assert result.content.startswith("app.log:1:needle") or "larger than 1 MB" in result.content


@case("crashes", "a /proc file that says it is empty but never ends is read within the limit, then skipped")
def test_endless_proc_file(tools: Tools) -> None:
    with must_finish_within(5):
        result = tools.run("grep_search", pattern="needle", path="/proc/self/pagemap")

    assert not result.is_error and result.content.startswith("No matches")


@case("crashes", "/dev/zero as the search path (directly or by a symlink): refused as a device at once")
@pytest.mark.parametrize("how", ["direct", "symlink"])
def test_device_as_search_path(tools: Tools, project_dir: Path, how: str) -> None:
    (project_dir / "zero").symlink_to("/dev/zero")
    path = "/dev/zero" if how == "direct" else "zero"

    with must_finish_within(5):
        result = tools.run("grep_search", pattern="x", path=path)

    assert result.is_error and "/dev/zero is a character device, not a regular file" in result.content


@case("crashes", "a symlink to /dev/zero inside a searched folder is not followed; the search completes")
def test_device_symlink_inside_the_tree(tools: Tools, project_dir: Path) -> None:
    (project_dir / "zero").symlink_to("/dev/zero")
    (project_dir / "notes.txt").write_text("needle\n")

    with must_finish_within(5):
        result = tools.run("grep_search", pattern="needle|\\x00")

    assert result.content == "notes.txt:1:needle"


HOSTILE_PATTERNS = {
    "nested_counts": ("((a{100}){100}){100}", "repeats too much: its counted repeats"),
    "huge_count": ("a{4294967296}", "repeats too much"),
    "too_long": ("x" * 3000, "The pattern is 3000 characters long; the limit is 2000."),
    "deep_nesting": ("(" * 900 + "a" + ")" * 900, "Invalid regular expression"),
    "unbalanced": ("def run(", "Invalid regular expression def run(: missing )"),
}


@case("crashes", "a pattern expensive (or impossible) to compile is refused at once with a clear reason")
@pytest.mark.parametrize("name", HOSTILE_PATTERNS)
def test_hostile_pattern_to_compile(tools: Tools, project_dir: Path, name: str) -> None:
    (project_dir / "a.txt").write_text("aaa\n")
    pattern, reason = HOSTILE_PATTERNS[name]

    with must_finish_within(5):
        result = tools.run("grep_search", pattern=pattern)

    assert result.is_error and reason in result.content
    assert "internal error" not in result.content and result.summary != "internal error"


@case(
    "crashes",
    "counted repeats a real search uses (\\p{L}{2}, [0-9a-f]{40}, \\d{1,3}) still compile and match",
)
def test_ordinary_counted_repeats(tools: Tools, project_dir: Path) -> None:
    (project_dir / "a.txt").write_text("commit 0123456789abcdef0123456789abcdef01234567 at 10.0.0.1 é\n")

    result = tools.run("grep_search", pattern=r"[0-9a-f]{40} at (?:\d{1,3}\.){3}\d{1,3} \p{L}{1}")

    assert result.content.startswith("a.txt:1:commit"), result.content


INVALID_GLOBS = ["[z-a]", "[z-a]*.py", "src/[!]", "{a,[z-a]}"]


@case(
    "crashes",
    "an invalid glob (pattern of list_files, include of grep_search) is a clear error, not internal",
)
@pytest.mark.parametrize("tool", ["list_files", "grep_search"])
@pytest.mark.parametrize("glob", INVALID_GLOBS)
def test_invalid_glob(tools: Tools, project_dir: Path, tool: str, glob: str) -> None:
    (project_dir / "a.py").write_text("x\n")
    tool_input = {"pattern": glob} if tool == "list_files" else {"pattern": "x", "include": glob}

    result = tools.run(tool, **tool_input)

    parameter = "pattern" if tool == "list_files" else "include"
    assert result.is_error and result.content.startswith(f"Invalid glob in {parameter}: {glob} (")
    assert "[!a] for any but these" in result.content


@case(
    "crashes", "a glob that backtracks exponentially on a long name: that path is given up, the rest listed"
)
@pytest.mark.parametrize("tool", ["list_files", "grep_search"])
def test_exponential_glob(tools: Tools, project_dir: Path, tool: str, ample_whole_search: None) -> None:
    matching = "a" * 30 + "b.txt"
    (project_dir / ("a" * 40)).write_text("needle\n")  # 40 a's and no b: 2**30 ways to fail
    (project_dir / matching).write_text("needle\n")
    glob = "{a,a}" * 30 + "b*"
    tool_input = {"pattern": glob} if tool == "list_files" else {"pattern": "needle", "include": glob}

    with must_finish_within(5):
        result = tools.run(tool, **tool_input)

    assert not result.is_error
    assert result.content.splitlines()[0] == (matching if tool == "list_files" else f"{matching}:1:needle")
    assert f"gave up on 1 {'paths' if tool == 'list_files' else 'files'}" in result.content
    assert f"(the first: {'a' * 40})" in result.content


FOLDER_PATHS = ["notes/", "notes/.", "notes/..", "new_folder/", "a.txt/", "./"]


@case("paths", "write_file / edit_file to a path ending in /, /. or /.. is refused; nothing is created")
@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
@pytest.mark.parametrize("file_path", FOLDER_PATHS)
def test_write_to_a_folder_path(tools: Tools, project_dir: Path, tool: str, file_path: str) -> None:
    (project_dir / "notes").mkdir()
    (project_dir / "a.txt").write_text("keep\n")
    before = snapshot(project_dir)
    tool_input = {"content": "x"} if tool == "write_file" else {"old_string": "", "new_string": "x"}

    result = tools.run(tool, file_path=file_path, **tool_input)

    assert result.is_error
    assert result.content.startswith(f"{file_path} ends in /")
    assert "names a folder, not a file; nothing was written" in result.content
    assert snapshot(project_dir) == before


@case("paths", "a memory written to the memory folder path ending in / is refused the same way")
def test_memory_write_to_folder_path(tools: Tools) -> None:
    result = tools.run("write_file", file_path=f"{tools.memory_dir}/", content="---\nname: x\n---\n")

    assert result.is_error and "names a folder, not a file" in result.content
    assert not tools.memory_dir.exists() or list(tools.memory_dir.iterdir()) == []
