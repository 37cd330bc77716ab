"""list_files and grep_search, driven through the registry with real permissions."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_claude.tools.search import MAX_LIST_ENTRIES, MAX_MATCH_LINE_CHARS, MAX_MATCHES
from tests.kit import empty_files
from tests.tool_harness import make_ctx, run_tool


@pytest.fixture
def tree(project_dir: Path) -> Path:
    files = {
        "README.md": "# demo\n",
        "setup.py": "import setuptools\n",
        "src/app.py": "def main():\n    return run()\n",
        "src/util/helpers.py": "def run():\n    return 42\n",
        "src/util/data.json": '{"run": true}\n',
        "build/gen.py": "def run(): pass\n",  # build output is the user's business: not skipped
        ".git/config": "[core] run\n",
        ".git/hooks/pre-commit.py": "def run(): pass\n",
        "node_modules/lib/index.py": "def run(): pass\n",
        "src/__pycache__/app.cpython-311.py": "def run(): pass\n",
        ".venv/lib/site.py": "def run(): pass\n",
    }
    for name, text in files.items():
        (project_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (project_dir / name).write_text(text)
    return project_dir


# --- list_files --------------------------------------------------------------------------


def test_recursive_glob_skips_vcs_dependency_and_cache_folders(tree: Path) -> None:
    ctx, _ = make_ctx(tree)
    result = run_tool(ctx, "list_files", pattern="**/*.py")
    assert result.content.splitlines() == ["build/gen.py", "setup.py", "src/app.py", "src/util/helpers.py"]
    assert result.summary == "4 paths"


def test_plain_star_is_top_level_and_folders_end_with_slash(tree: Path) -> None:
    ctx, _ = make_ctx(tree)
    assert run_tool(ctx, "list_files", pattern="*").content.splitlines() == [
        "README.md",
        "build/",
        "setup.py",
        "src/",
    ]


def test_subfolder_path_braces_and_paths_relative_to_project(tree: Path) -> None:
    ctx, _ = make_ctx(tree)
    result = run_tool(ctx, "list_files", pattern="**/*.{py,json}", path="src")
    assert result.content.splitlines() == ["src/app.py", "src/util/data.json", "src/util/helpers.py"]
    assert run_tool(ctx, "list_files", pattern="u?il/[dh]*", path="./src").content.splitlines() == [
        "src/util/data.json",
        "src/util/helpers.py",
    ]


def test_list_caps_output_and_says_how_many_were_left_out(project_dir: Path) -> None:
    empty_files(project_dir, (f"f{n:04d}.txt" for n in range(MAX_LIST_ENTRIES + 100)))
    ctx, _ = make_ctx(project_dir)
    lines = run_tool(ctx, "list_files", pattern="*.txt").content.splitlines()
    assert len(lines) == MAX_LIST_ENTRIES + 1
    assert lines[0] == "f0000.txt"
    assert lines[-1].startswith("… 100 more paths not shown")
    assert "narrow" in lines[-1].lower()


def test_list_no_matches_and_bad_paths(tree: Path) -> None:
    ctx, _ = make_ctx(tree)
    none = run_tool(ctx, "list_files", pattern="*.rs")
    assert not none.is_error and "No files match *.rs" in none.content and "**/" in none.content
    assert "is a file" in run_tool(ctx, "list_files", pattern="*", path="setup.py").content
    assert "Path not found: nope" in run_tool(ctx, "list_files", pattern="*", path="nope").content
    assert "relative" in run_tool(ctx, "list_files", pattern="/etc/*").content
    assert "relative" in run_tool(ctx, "list_files", pattern="../*").content


def test_list_outside_the_project_asks_first(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.txt").touch()
    ctx, user = make_ctx(tree, "n", "y")
    denied = run_tool(ctx, "list_files", pattern="*", path=str(outside))
    allowed = run_tool(ctx, "list_files", pattern="*", path=str(outside))
    assert denied.is_error and "refused" in denied.content
    assert allowed.content == str(outside.resolve() / "x.txt")
    assert [(r.tool, r.action, r.reason) for r in user.questions] == [
        ("list_files", "read", "outside the project"),
    ] * 2


# --- grep_search -------------------------------------------------------------------------


def test_grep_reports_path_line_text_and_skips_folders(tree: Path) -> None:
    ctx, _ = make_ctx(tree)
    result = run_tool(ctx, "grep_search", pattern=r"def run\(")
    assert result.content.splitlines() == [
        "build/gen.py:1:def run(): pass",
        "src/util/helpers.py:1:def run():",
    ]
    assert result.summary == "2 matches"


def test_grep_include_filter_and_single_file(tree: Path) -> None:
    ctx, _ = make_ctx(tree)
    assert (
        run_tool(ctx, "grep_search", pattern="run", include="*.json").content
        == 'src/util/data.json:1:{"run": true}'
    )
    assert run_tool(ctx, "grep_search", pattern="run", include="*.{md,txt}").content.startswith("No matches")
    single = run_tool(ctx, "grep_search", pattern="return", path="src/app.py")
    assert single.content == "src/app.py:2:    return run()"


def test_grep_invalid_regex_is_a_clear_error(tree: Path) -> None:
    ctx, _ = make_ctx(tree)
    result = run_tool(ctx, "grep_search", pattern="def run(")
    assert result.is_error
    assert result.content.startswith("Invalid regular expression def run(: missing ) at position 8.")
    assert "backslash" in result.content


def test_grep_skips_binary_files_fifos_and_symlinks(tree: Path, tmp_path: Path) -> None:
    (tree / "blob.bin").write_bytes(b"\x00needle")
    os.mkfifo(tree / "pipe")
    secret = tmp_path / "secret.txt"
    secret.write_text("needle outside\n")
    (tree / "link.txt").symlink_to(secret)
    (tree / "notes.txt").write_text("a needle here\n")
    ctx, user = make_ctx(tree)
    previous = signal.signal(signal.SIGALRM, lambda *_: pytest.fail("grep_search blocked (on the FIFO?)"))
    signal.alarm(5)  # a FIFO opened the wrong way would block forever
    try:
        result = run_tool(ctx, "grep_search", pattern="needle")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert result.content == "notes.txt:1:a needle here"
    assert user.questions == []


def test_grep_clips_long_lines_around_the_match(project_dir: Path) -> None:
    (project_dir / "min.js").write_text("x" * 5000 + "NEEDLE" + "y" * 5000 + "\n")
    ctx, _ = make_ctx(project_dir)
    line = run_tool(ctx, "grep_search", pattern="NEEDLE").content
    text = line.split(":", 2)[2]
    assert "NEEDLE" in text
    assert len(text) <= MAX_MATCH_LINE_CHARS + 2
    assert text.startswith("…") and text.endswith("…")


def test_grep_caps_matches_with_a_note(project_dir: Path) -> None:
    (project_dir / "many.txt").write_text("hit\n" * (MAX_MATCHES + 50))
    ctx, _ = make_ctx(project_dir)
    result = run_tool(ctx, "grep_search", pattern="hit")
    lines = result.content.splitlines()
    assert len(lines) == MAX_MATCHES + 1
    assert lines[-1].startswith(f"… stopped after {MAX_MATCHES} matches")
    assert result.summary == f"{MAX_MATCHES}+ matches"


def test_grep_outside_the_project_asks(project_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "other"
    outside.mkdir()
    (outside / "a.txt").write_text("found\n")
    ctx, user = make_ctx(project_dir, "y")
    result = run_tool(ctx, "grep_search", pattern="found", path=str(outside))
    assert result.content == f"{outside.resolve() / 'a.txt'}:1:found"
    assert [r.tool for r in user.questions] == ["grep_search"]


# The whole file is searched for candidate lines before each line is checked on its own: that
# must find exactly what searching every line on its own finds (anchors, empty matches, CRLF).
LINE_PATTERNS = ["a", "^a", "a$", "^$", "b*", r"\s", r"a\s*b", "[^a]", "(?s)a.b", r"\bab\b", "x|^", ""]


# Hypothesis' default 100 examples: over 12 patterns and texts of 5 characters (up to 40 of
# them) that draws every pattern some 8 times, with CR, LF and CRLF in most texts.
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet="ab \r\n", max_size=40), pattern=st.sampled_from(LINE_PATTERNS))
def test_grep_finds_what_a_line_by_line_search_finds(project_dir: Path, text: str, pattern: str) -> None:
    (project_dir / "f.txt").write_bytes(text.encode())
    lines = text.split("\n")[: -1 if text.endswith("\n") else None] if text else []
    expected = [
        f"f.txt:{number}:{line.rstrip(chr(13))}"
        for number, line in enumerate(lines, 1)
        if re.search(pattern, line.rstrip("\r"))
    ]

    result = run_tool(make_ctx(project_dir)[0], "grep_search", pattern=pattern, path="f.txt")

    found = [] if result.content.startswith("No matches") else result.content.split("\n")
    assert found == expected[:MAX_MATCHES]
