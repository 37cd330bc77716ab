"""The screen after a resume, rendered through the real renderers into a console: which part of
the conversation it shows, how it shortens long replies and runs of tool calls, what it leaves out."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mini_claude.core import prompts
from mini_claude.sessions.catalog import SessionSummary
from mini_claude.sessions.loading.recent import RecentPart
from mini_claude.tools.registry import default_registry
from mini_claude.ui.render.console import make_renderer
from mini_claude.ui.render.resumed_view import REPLY_LINES_SHOWN, TOOL_LINES_SHOWN, reply_tail, show_recent
from mini_claude.ui.repl.session_picker import PickerState, last_used_label, row_text

NOW = 1_750_000_000.0


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(tool_id: str, path: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "read_file", "input": {"file_path": path}}


def result(tool_id: str, content: str = "ok", error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": error}


def shown(messages: list[dict[str, Any]], *, plain: bool = True, width: int = 100) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=not plain)
    show_recent(console, make_renderer(console, plain=plain), RecentPart(messages), "a" * 32, _summarize)
    return console.file.getvalue()  # type: ignore[attr-defined]


_summarize = default_registry().summarize_call


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def exchange(n: int) -> list[dict[str, Any]]:
    return [user(text(f"question {n}")), assistant(text(f"answer {n}"))]


@pytest.mark.parametrize("plain", [True, False], ids=["plain", "live"])
def test_the_last_three_exchanges_then_a_rule(plain: bool) -> None:
    screen = shown([m for n in range(6) for m in exchange(n)], plain=plain)

    assert screen.startswith("… 6 earlier messages\n")
    assert "question 2" not in screen and "answer 2" not in screen
    assert [line for line in screen.splitlines() if line.startswith(">")] == [
        "> question 3",
        "> question 4",
        "> question 5",
    ]
    assert screen.index("answer 5") < screen.index(f"resumed session {'a' * 12} · 12 messages")


def test_tool_lines_memories_and_notes() -> None:
    messages = [
        {
            "role": "user",
            "content": [text("read the files"), text("<system-reminder>a memory</system-reminder>")],
        },
        {"role": "assistant", "content": [text("Reading."), *[call(f"t{i}", f"f{i}.py") for i in range(9)]]},
        {
            "role": "user",
            "content": [
                *[result(f"t{i}") for i in range(8)],
                result("t8", "File not found: f8.py.\nmore", error=True),
                text(prompts.notice("user_interrupted")),
                text("never mind"),
            ],
        },
    ]
    screen = shown(messages)

    assert "a memory" not in screen  # a recalled memory is not something the user typed
    assert f"… {9 - TOOL_LINES_SHOWN} earlier tool calls" in screen
    assert "● read_file(f0.py)" not in screen and "● read_file(f7.py)" in screen
    assert "✗ read_file(f8.py) → File not found: f8.py\n" in screen and "more" not in screen
    assert screen.index("Interrupted.") < screen.index("> never mind")


def test_a_long_user_message_shows_its_first_line() -> None:
    screen = shown([user(text("fix this:\n" + "x = 1\n" * 50))])

    assert "> fix this: …" in screen and "x = 1" not in screen


def test_a_long_reply_shows_its_end_from_a_block_start() -> None:
    paragraphs = "\n\n".join(f"Paragraph {n} line one.\nParagraph {n} line two." for n in range(20))
    tail, hidden = reply_tail(paragraphs, REPLY_LINES_SHOWN)

    assert tail.startswith("Paragraph 16 line one.") and tail.endswith("Paragraph 19 line two.")
    assert hidden == len(paragraphs.split("\n")) - len(tail.split("\n"))
    assert reply_tail("short\n\nreply", REPLY_LINES_SHOWN) == ("short\n\nreply", 0)


def test_a_reply_ending_in_a_long_code_block_reopens_it() -> None:
    code = "\n".join(f"line_{n} = {n}" for n in range(40))
    tail, hidden = reply_tail(f"Here it is:\n\n```python\n{code}\n```", REPLY_LINES_SHOWN)

    lines = tail.split("\n")
    assert lines[0] == "```python" and lines[-1] == "```" and len(lines) == REPLY_LINES_SHOWN
    assert "line_39 = 39" in tail and "line_0 =" not in tail and hidden > 0
    screen = shown(
        [
            {"role": "user", "content": [text("code?")]},
            {"role": "assistant", "content": [text(f"```python\n{code}\n```")]},
        ],
        plain=False,
    )
    assert "earlier lines of the reply" in screen and "```" not in screen  # rendered as code


def test_when_last_used_in_a_few_characters() -> None:
    assert [last_used_label(NOW - age, NOW) for age in (5, 300, 7200, 3 * 86_400)] == [
        "now",
        "5m",
        "2h",
        "3d",
    ]
    assert len(last_used_label(NOW - 200 * 86_400, NOW)) <= 6


def test_the_filter_matches_every_word_of_the_first_message_or_an_id_start() -> None:
    sessions = [
        SessionSummary("ab" + "0" * 30, Path("/a"), NOW, 1, first_message="Fix the LOGIN bug"),
        SessionSummary("cd" + "0" * 30, Path("/b"), NOW, 1, first_message="deploy\nthe login page"),
    ]
    state = PickerState(sessions)
    state.set_filter("login fix")
    assert [s.id[:2] for s in state.matches] == ["ab"]
    state.set_filter("CD")
    assert [s.id[:2] for s in state.matches] == ["cd"]
    state.set_filter("0000")  # the middle of an id matches nothing
    assert state.matches == []
    assert row_text(sessions[1], 40, NOW) == "   now    0  deploy the login page"  # one line


def test_moving_keeps_the_selection_on_screen() -> None:
    state = PickerState([SessionSummary(f"{n:032x}", Path("/a"), NOW, 1) for n in range(50)])
    for _ in range(20):
        state.move(1, rows=10)
    assert (state.selected, state.top) == (20, 11)
    state.move(-100, rows=10)
    assert (state.selected, state.top) == (0, 0)
    state.move(100, rows=10)
    assert (state.selected, state.top) == (49, 40)


def test_a_row_of_wide_characters_fits_its_cells() -> None:
    from prompt_toolkit.utils import get_cwidth

    summary = SessionSummary("e" * 32, Path("/a"), NOW, 1, first_message="日本語のテキスト" * 2000)
    row = row_text(summary, 40, NOW)

    assert row.endswith("…") and 38 <= get_cwidth(row) <= 40


def test_results_written_for_the_model_show_their_short_form() -> None:
    denied = prompts.notice("permission_denied", tool="edit_file", verb="edit", target="app.py")
    binary = prompts.notice("file_binary", path="logo.png")
    messages = [
        user(text("change it")),
        assistant(call("t1", "app.py"), call("t2", "logo.png")),
        user(result("t1", denied, error=True), result("t2", binary, error=True)),
    ]
    screen = shown(messages)

    assert "✗ read_file(app.py) → permission denied\n" in screen
    assert "✗ read_file(logo.png) → a binary file: not shown\n" in screen
    assert "Do not retry" not in screen and "run_shell" not in screen
