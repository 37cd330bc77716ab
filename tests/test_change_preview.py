"""What a write's permission question shows of the change: built by the file tools, capped, made
of visible text, and laid out to fit the screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.safety import change_preview
from mini_claude.safety.change_preview import (
    MAX_PREVIEW_LINES,
    NEW_FILE_HEAD_LINES,
    edit_preview,
    new_file_preview,
    replace_preview,
)
from mini_claude.safety.permissions import PermissionRequest
from mini_claude.ui.questions.permission_question import question_view
from tests.tool_harness import ScriptedUser, Tools, run_tool

BINARY_REASON = (
    "x.bin looks like a binary file (not UTF-8 text), so it is not shown. Inspect it with run_shell."
)
NUMBERED = "".join(f"line {n}\n" for n in range(1, 201))


def marked(preview: change_preview.ChangePreview) -> list[str]:
    marks = {"added": "+", "removed": "-", "context": " ", "hunk": "", "content": ""}
    return [marks[line.kind] + line.text for line in preview.lines]


def test_an_edit_is_a_diff_with_three_lines_of_context_and_real_line_numbers() -> None:
    after = NUMBERED.replace("line 100\n", "line 100 changed\nan extra line\n")
    preview = edit_preview(NUMBERED, after)

    assert preview.summary == "removes 1 line, adds 2 lines"
    assert marked(preview) == [
        "@@ -97,7 +97,8 @@",
        " line 97", " line 98", " line 99",
        "-line 100", "+line 100 changed", "+an extra line",
        " line 101", " line 102", " line 103",
    ]  # fmt: skip


def test_a_huge_diff_is_cut_and_says_how_much_was_left_out() -> None:
    after = NUMBERED.replace("line", "LINE")
    preview = edit_preview(NUMBERED, after)

    assert len(preview.lines) == MAX_PREVIEW_LINES
    assert preview.omitted == 1 + 400 - MAX_PREVIEW_LINES  # a hunk header, 200 removed, 200 added
    assert preview.summary == "removes 200 lines, adds 200 lines"


def test_a_new_file_shows_its_first_lines_and_its_size() -> None:
    preview = new_file_preview(NUMBERED)

    assert preview.summary == f"new file: 200 lines, {len(NUMBERED) / 1024:.1f} KB"
    assert [(line.number, line.text) for line in preview.lines[:2]] == [(1, "line 1"), (2, "line 2")]
    assert len(preview.lines) == NEW_FILE_HEAD_LINES and preview.omitted == 200 - NEW_FILE_HEAD_LINES


def test_a_replaced_file_shows_its_diff_however_long() -> None:
    small = replace_preview("a\nb\n", "a\nc\n")
    assert small.summary == "replaces its content: removes 1 line, adds 1 line"
    assert marked(small) == ["@@ -1,2 +1,2 @@", " a", "-b", "+c"]

    rewrite = replace_preview(NUMBERED, NUMBERED.upper())
    assert rewrite.summary == "replaces its content: removes 200 lines, adds 200 lines"
    assert marked(rewrite)[:3] == ["@@ -1,200 +1,200 @@", "-line 1", "-line 2"]
    assert len(rewrite.lines) == MAX_PREVIEW_LINES and len(rewrite.lines + rewrite.more) == 401

    unreadable = replace_preview(None, "new\n", why_no_diff=BINARY_REASON)
    assert (
        unreadable.summary
        == "replaces the file (x.bin looks like a binary file (not UTF-8 text)) with 1 line, 4 bytes"
    )


@pytest.mark.parametrize(
    "hostile",
    ["\x1b[2J\x1b[31mred", "\x1b]52;c;ZXZpbA==\x07", "\u202egnp.exe", "a\rOVERWRITE", "\x9b31m", "\x07\x08"],
)
def test_escape_codes_in_the_content_are_written_out(hostile: str) -> None:
    for preview in (new_file_preview(f"ok\n{hostile}\n"), edit_preview("ok\n", f"ok\n{hostile}\n")):
        text = "".join(line.text for line in preview.lines)
        assert all(ch.isprintable() or ch == "\t" for ch in text), repr(text)
        assert "\\x1b" in text or "\\u202e" in text or "\\r" in text or "\\x9b" in text or "\\x07" in text


def test_binary_content_is_counted_not_shown() -> None:
    preview = new_file_preview("PK\x03\x04\0\0binary")
    assert preview.lines == () and preview.summary.endswith("(binary data, not shown)")


def test_a_long_new_line_is_kept_whole_a_long_unchanged_one_cut_with_a_count() -> None:
    assert new_file_preview("x" * 10_000 + "END").lines[0].text == "x" * 10_000 + "END"
    long_context = "c" * 10_000
    preview = edit_preview(f"{long_context}\nold\n", f"{long_context}\nnew\n")
    cut = 10_000 - change_preview.MAX_CONTEXT_LINE_CHARS
    assert preview.lines[1].kind == "context" and preview.lines[1].text.endswith(
        f"… ({cut:,} more characters)"
    )


# --- the file tools build it, only when they ask -------------------------------------------------


def test_edit_file_asks_with_the_diff_and_writes_the_file_as_it_is_after_the_answer(
    project_dir: Path,
) -> None:
    (project_dir / "app.py").write_text("def f():\n    return 1\n")
    tools = Tools(project_dir, "ask")

    def answer(request: PermissionRequest) -> str:
        # The user takes their time; meanwhile the file changes elsewhere (an editor saves it).
        (project_dir / "app.py").write_text("# header\ndef f():\n    return 1\n")
        tools.user.questions.append(request)
        return "y"

    tools.ctx.permissions.ask = answer
    result = tools.run("edit_file", file_path="app.py", old_string="return 1", new_string="return 2")

    [question] = tools.user.questions
    assert marked(question.preview) == ["@@ -1,2 +1,2 @@", " def f():", "-    return 1", "+    return 2"]
    assert not result.is_error
    assert (project_dir / "app.py").read_text() == "# header\ndef f():\n    return 2\n"  # nothing lost


def test_an_edit_that_cannot_apply_is_told_to_the_model_only_after_the_answer(project_dir: Path) -> None:
    """Otherwise "not found" / "matches 2 places" would tell the model about a file it may not read."""
    home_file = Path.home() / ".netrc"
    home_file.write_text("machine example.com password hunter2\n")
    tools = Tools(project_dir, "accept-edits", "n")
    result = tools.run("edit_file", file_path=str(home_file), old_string="hunter3", new_string="x")

    [question] = tools.user.questions
    assert question.preview.summary.startswith("no preview: old_string was not found")
    assert result.denied and "not found" not in result.content


def test_write_file_previews_a_new_file_and_a_replaced_one(project_dir: Path) -> None:
    tools = Tools(project_dir, "ask", "y", "n")
    tools.run("write_file", file_path="notes.txt", content="one\ntwo\n")
    tools.run("write_file", file_path="notes.txt", content="one\nthree\n")

    new, replaced = tools.user.questions
    assert new.preview.summary == "new file: 2 lines, 8 bytes"
    assert replaced.preview.summary == "replaces its content: removes 1 line, adds 1 line"
    assert (project_dir / "notes.txt").read_text() == "one\ntwo\n"


def test_no_question_no_preview(project_dir: Path) -> None:
    user = ScriptedUser()
    tools = Tools(project_dir, "accept-edits")
    tools.ctx.permissions.ask = user
    assert not run_tool(tools.ctx, "write_file", file_path="a.txt", content="x").is_error
    assert user.questions == []


# --- laid out in the question ---------------------------------------------------------------------


def test_the_preview_fits_the_screen_and_v_shows_all_of_it() -> None:
    request = PermissionRequest(
        "write_file", "write", "/p/notes.txt", "edit a project file", preview=new_file_preview(NUMBERED)
    )
    short = question_view(request, 80, 12)
    assert len(short.rows) <= 12 - 3 and short.hidden_preview_rows and short.can_show_more
    notes = [row for row in short.rows if row.text.endswith("answer v to see all of it")]
    assert len(notes) == 1 and short.rows[-1].text == "… 180 more lines not shown: answer v to see them"
    full = question_view(request, 80, 12, everything=True)
    assert [row.text for row in full.rows][2:] == [f"line {n}" for n in range(1, 201)]
    assert not full.can_show_more
    assert all(len(row.gutter) + len(row.text) <= 80 for row in full.rows)
