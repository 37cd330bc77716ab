"""The renderer, judged by what ends up on a (simulated) terminal screen."""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
import time

import pytest
from rich.console import Console

from mini_claude.core.events import (
    ContextStatus,
    MemoriesRecalled,
    Notice,
    RequestStarted,
    TextDelta,
    TextDone,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    UsageReport,
)
from mini_claude.ui.render.console import create_console, make_renderer, plain_mode_wanted
from mini_claude.ui.render.live_tail import TailView
from mini_claude.ui.render.markdown_stream import CodeSlice, MarkdownBlock, MarkdownStream
from mini_claude.ui.render.renderer import Renderer
from mini_claude.ui.render.turn_progress import TurnProgress
from tests.bench.render_row import render_markdown_once

REPLY = """\
# Plan for the fix

The parser drops **escaped** quotes. UNIQUE-INTRO
It happens in `lexer.py`.

1. Read the lexer
2. Find the bug

   UNIQUE-ITEM-PARAGRAPH inside item two

   ```python
   def nested():

       return 1
   ```
3. Write a test

- bullet UNIQUE-BULLET-A
- bullet UNIQUE-BULLET-B

```python
def escape(text):
    '''Escape quotes.

    UNIQUE-DOCSTRING
    '''

    return text.replace('"', '\\\\"')
```

| file | change |
|------|--------|
| lexer.py | UNIQUE-TABLE-CELL |

> UNIQUE-QUOTE that spans
> two lines

Setext heading UNIQUE-SETEXT
-----------------------------

---

Done. UNIQUE-END
"""

UNIQUE_MARKERS = re.findall(r"UNIQUE-[A-Z-]+", REPLY)
_ESCAPE = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def terminal_screen(raw: str) -> str:
    """Replay rich's output like a terminal would (cursor moves, line erases), return the screen."""
    rows: list[list[str]] = [[]]
    row = col = 0
    position = 0

    def write(text: str) -> None:
        nonlocal row, col
        for char in text:
            if char == "\n":
                row, col = row + 1, 0
                rows.extend([] for _ in range(row + 1 - len(rows)))
            elif char == "\r":
                col = 0
            else:
                line = rows[row]
                line.extend(" " * (col - len(line)))
                line[col : col + 1] = [char]
                col += 1

    for match in _ESCAPE.finditer(raw):
        write(raw[position : match.start()])
        position = match.end()
        params, command = match.group(1) or "", match.group(2)
        count = int(params) if params.isdigit() else 1
        if command == "A":
            row = max(0, row - count)
        elif command == "G":
            col = count - 1
        elif command == "K":
            del rows[row][0 if params == "2" else col :]
    write(raw[position:])
    return "\n".join("".join(line).rstrip() for line in rows).strip("\n")


@pytest.fixture(autouse=True)
def capable_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich reads these at console creation; a CI's TERM=dumb would switch live display off."""
    monkeypatch.setenv("TERM", "xterm-256color")
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_INTERACTIVE", "COLUMNS", "LINES"):
        monkeypatch.delenv(name, raising=False)


def make_console(*, width: int = 80, color: bool = False) -> Console:
    return Console(
        file=io.StringIO(), force_terminal=True, width=width, height=25,
        color_system="truecolor" if color else None,
    )  # fmt: skip


def screen(console: Console) -> str:
    return terminal_screen(console.file.getvalue())  # type: ignore[attr-defined]


def without_blank_lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def rendered_once(text: str, *, width: int = 80) -> str:
    console = make_console(width=width)
    render_markdown_once(console, text)
    return screen(console)


def stream_reply(renderer: Renderer, text: str, chunk_sizes: list[int]) -> None:
    renderer(RequestStarted())
    position, index = 0, 0
    while position < len(text):
        size = chunk_sizes[index % len(chunk_sizes)]
        renderer(TextDelta(text[position : position + size]))
        position, index = position + size, index + 1
    renderer(TextDone())
    renderer(TurnEnded("done", text))


# -- streamed markdown ------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_sizes", [[1], [3], [7, 1, 13], [40]])
def test_streamed_reply_looks_like_the_reply_rendered_once(chunk_sizes: list[int]) -> None:
    console = make_console()
    stream_reply(make_renderer(console, plain=False), REPLY, chunk_sizes)

    assert without_blank_lines(screen(console)) == without_blank_lines(rendered_once(REPLY))


def test_every_block_is_shown_exactly_once() -> None:
    console = make_console()
    stream_reply(make_renderer(console, plain=False), REPLY, [2])

    shown = screen(console)
    for marker in UNIQUE_MARKERS:
        assert shown.count(marker) == 1, marker
    assert "Thinking" not in shown


# Boundaries that a line-by-line reading of markdown gets wrong; the parser rich uses gets them right.
TRICKY_REPLIES = {
    "html comment with blank lines": "Intro\n\n<!--\nhidden\n\nstill hidden\n-->\n\nAfter\n",
    "html comment ending a list": "- item\n<!--\nhidden\n\nstill hidden\n-->\n\nAfter\n",
    "table interrupting a paragraph": "Para\na | b\n-|-\n1 | 2\n\nAfter\n",
    "table then a list": "a | b\n-|-\n1 | 2\n1. item\n2. item\n\nAfter\n",
    "lazy quote line": "> quoted\ncontinued lazily\n\nAfter\n",
    "hashtag, no heading": "text\n#hashtag\n\nAfter\n",
    "number starting no list": "Para\n10. not a list\n\nAfter\n",
    # Rich numbers a list's items from its first number, whatever the later ones say.
    "long list numbered anew": "".join(f"{n}. item {n}\n" for n in [*range(1, 12), *range(1, 15)]),
}


@pytest.mark.parametrize("name", TRICKY_REPLIES)
def test_tricky_block_boundaries_stream_like_the_reply_rendered_once(name: str) -> None:
    text = TRICKY_REPLIES[name]
    for chunk_sizes in ([1], [3, 40]):
        console = make_console()
        stream_reply(make_renderer(console, plain=False), text, chunk_sizes)
        assert without_blank_lines(screen(console)) == without_blank_lines(rendered_once(text)), chunk_sizes


def test_code_fence_with_blank_lines_is_never_cut_apart() -> None:
    text = "Intro\n```python\ndef f():\n\n\n    return 1\n# not a heading\n```\nAfter\n"
    stream = MarkdownStream(commit_after_lines=50)
    pieces = [piece for char in text for piece in stream.feed(char)] + stream.finish()

    assert pieces == [
        MarkdownBlock("Intro\n"),
        MarkdownBlock("```python\ndef f():\n\n\n    return 1\n# not a heading\n```\n"),
        MarkdownBlock("After\n"),
    ]


def test_blocks_are_cut_only_between_top_level_blocks() -> None:
    text = (
        "# Title\npara one\nstill para\n\n- a\n\n  more a\n- b\n\n"
        "Title\n---\n\n    indented\n\n    code\nend\n"
    )
    stream = MarkdownStream(commit_after_lines=50)
    pieces = [piece for char in text for piece in stream.feed(char)] + stream.finish()

    assert [piece.text for piece in pieces if isinstance(piece, MarkdownBlock)] == [
        "# Title\n",
        "para one\nstill para\n",
        "- a\n\n  more a\n- b\n\n",
        "Title\n---\n",
        "    indented\n\n    code\n",
        "end\n",
    ]


def test_long_code_fence_is_printed_in_slices_that_look_like_one_block() -> None:
    code = "".join(f"def function_{n}(value):\n    return value * {n}\n\n" for n in range(30))
    text = f"Here:\n\n```python\n{code}```\n\nUNIQUE-AFTER\n"
    stream = MarkdownStream(commit_after_lines=8)
    pieces = [piece for part in re.findall(r".{1,5}", text, re.S) for piece in stream.feed(part)]
    slices = [piece for piece in pieces + stream.finish() if isinstance(piece, CodeSlice)]
    assert len(slices) > 3 and slices[0].first and slices[-1].last
    assert "\n".join(piece.code for piece in slices) == code.rstrip()

    console = make_console()
    stream_reply(make_renderer(console, plain=False), text, [5])
    assert without_blank_lines(screen(console)) == without_blank_lines(rendered_once(text))


def test_long_list_is_printed_in_parts_that_look_like_one_list() -> None:
    text = "Steps:\n\n" + "".join(f"{n}. step number {n}\n" for n in range(1, 40)) + "\nUNIQUE-DONE\n"
    console = make_console()
    stream_reply(make_renderer(console, plain=False), text, [4])

    assert screen(console) == rendered_once(text)


def test_redraws_between_slow_deltas_do_not_garble_the_screen() -> None:
    # The live region is redrawn by a timer thread; redraws must never interleave with prints.
    console = make_console()
    renderer = make_renderer(console, plain=False)
    renderer(RequestStarted())
    for position in range(0, len(REPLY), 25):
        renderer(TextDelta(REPLY[position : position + 25]))
        time.sleep(0.01)
    renderer(TurnEnded("done", REPLY))

    assert without_blank_lines(screen(console)) == without_blank_lines(rendered_once(REPLY))


def test_live_tail_is_never_taller_than_the_screen() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=40, height=10)
    stream = MarkdownStream()
    stream.feed("word " * 400 + "\nUNIQUE-LAST-LINE")  # one long, unfinished paragraph
    view = TailView()
    view.show(stream.snapshot(), gap_above=False)

    lines = console.render_lines(view)
    assert 0 < len(lines) <= 8
    assert "UNIQUE-LAST-LINE" in "".join(segment.text for segment in lines[-1])


def test_random_chunking_never_loses_or_repeats_text() -> None:
    rng = random.Random(7)
    for _ in range(20):
        sizes = [rng.randint(1, 9) for _ in range(10)]
        stream = MarkdownStream(commit_after_lines=rng.randint(2, 12))
        pieces, position = [], 0
        while position < len(REPLY):
            size = sizes[position % len(sizes)]
            pieces += stream.feed(REPLY[position : position + size])
            position += size
        pieces += stream.finish()
        text = "".join(p.text if isinstance(p, MarkdownBlock) else p.code + "\n" for p in pieces)
        assert [line for line in text.splitlines() if line.strip() and "```" not in line] == [
            line for line in REPLY.splitlines() if line.strip() and "```" not in line
        ]


# -- spinner, pause, interrupt ------------------------------------------------------------------


def test_spinner_shows_while_waiting_and_goes_away() -> None:
    console = make_console()
    renderer = make_renderer(console, plain=False)
    renderer(RequestStarted())
    assert "Thinking…" in screen(console)

    renderer(TextDelta("Hello UNIQUE-HELLO\n"))
    assert "Thinking" not in screen(console)
    renderer(TurnEnded("done", "Hello"))
    assert screen(console) == "Hello UNIQUE-HELLO"


def test_pause_hides_the_spinner_and_brings_it_back() -> None:
    console = make_console()
    renderer = make_renderer(console, plain=False)
    renderer(RequestStarted())
    with renderer.pause():
        assert "Thinking" not in screen(console)
        console.print("Allow bash(rm -rf build)? [y/n]", markup=False)
    question, spinner = screen(console).splitlines()
    assert question == "Allow bash(rm -rf build)? [y/n]"
    assert spinner.endswith(" Thinking… (0s · esc to interrupt)")
    renderer(TurnEnded("done", ""))
    assert screen(console) == "Allow bash(rm -rf build)? [y/n]"


def test_pause_during_streaming_keeps_the_text() -> None:
    console = make_console()
    renderer = make_renderer(console, plain=False)
    renderer(RequestStarted())
    renderer(TextDelta("First paragraph.\n\nSecond UNIQUE-SECOND"))
    with renderer.pause():
        console.print("question?")
    renderer(TextDelta(" continues.\n"))
    renderer(TurnEnded("done", ""))
    assert without_blank_lines(screen(console)) == [
        "First paragraph.",
        "question?",
        "Second UNIQUE-SECOND continues.",
    ]


def test_interrupt_mid_stream_keeps_what_was_shown_once() -> None:
    console = make_console()
    renderer = make_renderer(console, plain=False)
    renderer(RequestStarted())
    for char in "Done paragraph UNIQUE-A.\n\nHalf a sentence UNIQUE-B":
        renderer(TextDelta(char))
    renderer.interrupt()
    renderer(TextDelta(" late text UNIQUE-LATE\n"))
    renderer(TextDone())
    renderer(TurnEnded("interrupted", ""))

    assert screen(console) == "Done paragraph UNIQUE-A.\n\nHalf a sentence UNIQUE-B"


def test_interrupt_is_safe_in_any_state() -> None:
    console = make_console()
    renderer = make_renderer(console, plain=False)
    renderer.interrupt()
    renderer(RequestStarted())
    renderer.interrupt()
    renderer.interrupt()
    with renderer.pause():
        renderer.interrupt()
    renderer(ToolStarted("t1", "bash", "sleep 5"))
    renderer.interrupt()
    renderer(TurnEnded("interrupted", ""))
    assert screen(console) == ""


# -- lines --------------------------------------------------------------------------------------


def test_tool_calls_are_one_line_each() -> None:
    console = make_console(width=60)
    renderer = make_renderer(console, plain=False)
    renderer(ToolStarted("t1", "read_file", "src/app.py"))
    renderer(ToolFinished("t1", "read_file", "120 lines", is_error=False))
    renderer(ToolStarted("t2", "bash", "npm test\n--watch"))
    renderer(ToolFinished("t2", "bash", "Error: tests failed\nstack trace line", is_error=True))
    renderer(ToolStarted("t3", "grep", "x" * 200))
    renderer(ToolFinished("t3", "grep", "3 matches", is_error=False))
    renderer(TurnEnded("done", ""))

    lines = screen(console).splitlines()
    assert lines[0] == "● read_file(src/app.py) → 120 lines"
    assert lines[1] == "✗ bash(npm test …) → Error: tests failed …"
    # A long argument is shortened in the middle so the result stays visible on the one line.
    assert lines[2].startswith("● grep(xxx") and "…" in lines[2] and lines[2].endswith(") → 3 matches")
    assert len(lines[2]) <= 60
    assert len(lines) == 3


def test_a_long_path_keeps_its_file_name_and_a_long_command_both_ends() -> None:
    console = make_console(width=60)
    renderer = make_renderer(console, plain=False)
    deep = "src/" + "/".join(f"folder{i}" for i in range(12)) + "/the_file.py"
    renderer(ToolStarted("t1", "read_file", deep))
    renderer(ToolFinished("t1", "read_file", "12 lines", is_error=False))
    renderer(ToolStarted("t2", "run_shell", "pytest -q " + "tests/a " * 20 + "--maxfail=1"))
    renderer(ToolFinished("t2", "run_shell", "exit 0", is_error=False))
    renderer(TurnEnded("done", ""))

    path_line, command_line = screen(console).splitlines()
    assert path_line.startswith("● read_file(…") and path_line.endswith("/the_file.py) → 12 lines")
    assert command_line.startswith("● run_shell(pytest -q") and "--maxfail=1) → exit 0" in command_line
    assert len(path_line) <= 60 and len(command_line) <= 60


def test_a_level_one_heading_starts_at_the_left() -> None:
    console = make_console(width=80)
    renderer = make_renderer(console, plain=False)
    stream_reply(renderer, "# A title\n\nBody text.\n", [5])
    renderer(TurnEnded("done", ""))
    assert screen(console).splitlines()[0] == "A title"


def test_tool_errors_are_red() -> None:
    console = make_console(color=True)
    renderer = make_renderer(console, plain=False)
    renderer(ToolStarted("t1", "bash", "false"))
    renderer(ToolFinished("t1", "bash", "exit code 1", is_error=True))
    assert re.search(r"\x1b\[31m → exit code 1", console.file.getvalue())  # type: ignore[attr-defined]


def test_an_error_reason_is_shown_whole_wrapping_while_results_stay_on_one_line() -> None:
    reason = (
        "Memory not saved: cannot use the memory directory /tmp/nc-home/.mini-claude/projects/"
        "0123456789abcdef/memory: [Errno 13] Permission denied: UNIQUE-END-OF-REASON"
    )
    console = make_console(width=60)
    renderer = make_renderer(console, plain=False)
    renderer(
        ToolStarted("t1", "write_file", "/tmp/nc-home/.mini-claude/projects/0123456789abcdef/memory/tea.md")
    )
    renderer(ToolFinished("t1", "write_file", reason, is_error=True))
    renderer(ToolStarted("t2", "read_file", "a.py"))
    renderer(ToolFinished("t2", "read_file", "a long success summary " * 5, is_error=False))
    renderer(TurnEnded("done", ""))

    *error_lines, success = screen(console).splitlines()
    # The path is cut from the left: its file name stays.
    assert error_lines[0].startswith("✗ write_file(…") and "/memory/tea.md) →" in error_lines[0]
    assert " ".join(line.strip() for line in error_lines).endswith(f"→ {reason}")
    assert all(len(line) <= 60 for line in error_lines)
    assert success.startswith("● read_file(a.py) → a long success") and len(success) == 60


def test_a_call_stopped_by_ctrl_c_keeps_its_line() -> None:
    console = make_console()
    renderer = make_renderer(console, plain=False)
    renderer(RequestStarted())
    renderer(ToolStarted("t1", "run_shell", "echo start; sleep 30; echo end"))
    renderer(ToolFinished("t1", "run_shell", "interrupted", is_error=True))
    renderer(TurnEnded("interrupted", ""))
    renderer.interrupt()
    console.print("Interrupted.")  # what the REPL prints after the turn
    assert screen(console) == "✗ run_shell(echo start; sleep 30; echo end) → interrupted\nInterrupted."


def test_notices_memories_and_usage() -> None:
    console = make_console()
    renderer = make_renderer(console, plain=False)
    renderer(MemoriesRecalled(("a.md", "b.md")))
    renderer(MemoriesRecalled(("only.md",)))
    renderer(MemoriesRecalled(()))
    renderer(Notice("rate limited, retrying", "warning"))
    renderer(UsageReport(input_tokens=10, output_tokens=5))
    assert screen(console).splitlines() == [
        "recalled 2 memories: a.md, b.md",
        "recalled 1 memory: only.md",
        "rate limited, retrying",
    ]


def test_text_and_tool_lines_are_separated_by_a_blank_line() -> None:
    console = make_console()
    renderer = make_renderer(console, plain=False)
    renderer(RequestStarted())
    renderer(TextDelta("Checking."))
    renderer(ToolStarted("t1", "read_file", "a.py"))
    renderer(ToolFinished("t1", "read_file", "3 lines", is_error=False))
    renderer(RequestStarted())
    renderer(TextDelta("All good."))
    renderer(TurnEnded("done", ""))
    assert screen(console).split("\n\n") == ["Checking.", "● read_file(a.py) → 3 lines", "All good."]


# -- plain mode ---------------------------------------------------------------------------------


@pytest.mark.parametrize("terminal_console", [False, True])
def test_plain_mode_passes_text_through_without_escape_codes(terminal_console: bool) -> None:
    console = make_console(color=True) if terminal_console else create_console(plain=True, file=io.StringIO())
    renderer = make_renderer(console, plain=True)
    renderer(MemoriesRecalled(("a.md",)))
    renderer(RequestStarted())
    for char in REPLY:
        renderer(TextDelta(char))
    renderer(TextDone())
    renderer(ToolStarted("t1", "bash", "ls"))
    renderer(ToolFinished("t1", "bash", "boom", is_error=True))
    renderer(Notice("careful", "error"))
    renderer(TurnEnded("done", REPLY))

    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\x1b" not in output
    assert output == f"recalled 1 memory: a.md\nThinking…\n\n{REPLY}\n✗ bash(ls) → boom\ncareful\n"


def test_plain_mode_says_it_is_waiting_once_per_wait() -> None:
    console = create_console(plain=True, file=io.StringIO())
    renderer = make_renderer(console, plain=True)
    renderer(RequestStarted())
    renderer(TextDelta("Let me look."))
    renderer(TextDone())
    renderer(ToolStarted("t1", "read_file", "a.py"))
    renderer(ToolFinished("t1", "read_file", "3 lines", is_error=False))
    renderer(RequestStarted())  # the second wait of the turn: told again, once
    renderer(TextDelta("Done."))
    renderer(TurnEnded("done", "Done."))

    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert output == "Thinking…\n\nLet me look.\n\n● read_file(a.py) → 3 lines\nThinking…\n\nDone.\n"


def test_importing_the_renderer_does_not_import_rich_markdown() -> None:
    code = (
        "import sys, mini_claude.ui.render.renderer;"
        " print(sorted(m for m in sys.modules if m.startswith('rich')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# -- NO_COLOR: everything but the colour ------------------------------------------------------


def colour_codes(raw: str) -> list[str]:
    """SGR parameters that set a foreground or background colour (bold, underline, dim are fine)."""
    found = []
    for params in re.findall(r"\x1b\[([0-9;]*)m", raw):
        numbers = [int(n) for n in params.split(";") if n]
        found += [str(n) for n in numbers if 30 <= n <= 49 or 90 <= n <= 107]
    return found


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_color_is_not_plain_mode_but_plain_and_pipes_still_are(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert not plain_mode_wanted(flag=False, stdout=FakeTerminal())
    assert plain_mode_wanted(flag=True, stdout=FakeTerminal())
    assert plain_mode_wanted(flag=False, stdout=io.StringIO())


def test_no_color_renders_markdown_live_without_any_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # a terminal, as far as rich can tell, with colour
    monkeypatch.setenv("COLORTERM", "truecolor")
    coloured = create_console(plain=False, file=io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    console = create_console(plain=False, file=io.StringIO())
    assert coloured.is_terminal and console.is_terminal and console.color_system is not None

    for target in (coloured, console):
        renderer = make_renderer(target, plain=False)
        renderer(RequestStarted())  # the spinner
        time.sleep(0.1)
        stream_reply(renderer, REPLY, [7])
        renderer(ToolStarted("t1", "bash", "false"))
        renderer(ToolFinished("t1", "bash", "exit code 1", is_error=True))
        renderer(Notice("careful", "warning"))
        renderer(TurnEnded("done", ""))

    assert colour_codes(coloured.file.getvalue()), "the check would catch colour"  # type: ignore[attr-defined]
    raw = console.file.getvalue()  # type: ignore[attr-defined]
    assert colour_codes(raw) == []
    assert "\x1b[1m" in raw, "bold stays"
    assert "Thinking…" in raw and "\x1b[2K" in raw, "the spinner and the live tail ran"
    *reply, tool_line, notice = without_blank_lines(screen(console))
    assert reply == without_blank_lines(rendered_once(REPLY)), "markdown rendered as usual"
    assert [tool_line, notice] == ["✗ bash(false) → exit code 1", "careful"]


def test_the_context_line_comes_when_usage_moved_or_passed_a_threshold() -> None:
    console = make_console(width=80)
    renderer = make_renderer(console, plain=True)
    for percent in (3, 8, 12, 15, 21, 24, 49, 51, 55, 71):
        renderer(ContextStatus(percent * 2_000, 200_000))
        renderer(TurnEnded("done", ""))
    shown = [line.split()[1] for line in screen(console).splitlines() if line.startswith("context:")]
    # 12% moved 10 points from nothing, 24% from 12%, 49% from 24%; 51% and 71% passed a threshold.
    assert shown == ["12%", "24%", "49%", "51%", "71%"]


def test_the_live_region_is_the_tail_then_the_status_line_with_no_padding() -> None:
    console = make_console(width=80)
    renderer = make_renderer(console, plain=False)
    renderer(RequestStarted())
    renderer(UsageReport(output_tokens=1_200))
    renderer(TextDelta("Steps:\n\n- first UNIQUE-A\n- second UNIQUE-B\n"))  # a list still open: the tail

    lines = screen(console).splitlines()

    assert lines[0] == "Steps:" and lines[-3:-1] == [" • first UNIQUE-A", " • second UNIQUE-B"]
    assert lines[-1][1:] == " Writing… (0s · ↓ 1.2k tokens · esc to interrupt)"  # after a spinner frame
    assert len(lines) <= 6  # the tail is as tall as its text, never padded to the screen


def test_the_status_line_counts_one_token_in_the_singular() -> None:
    progress = TurnProgress(clock=lambda: 0.0)
    progress.on(RequestStarted())
    progress.on(UsageReport(output_tokens=1))
    assert progress.suffix() == "(0s · ↓ 1 token · esc to interrupt)"
    progress.on(UsageReport(output_tokens=1))
    assert progress.suffix() == "(0s · ↓ 2 tokens · esc to interrupt)"
