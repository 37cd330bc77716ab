"""Streaming render: a long markdown reply through the real renderer into a virtual terminal."""

from __future__ import annotations

import io
import itertools
import os
import time

from rich.console import Console

from mini_claude.core.events import RequestStarted, TextDelta, TextDone, TurnEnded
from mini_claude.ui.render.console import make_renderer
from mini_claude.ui.render.live_tail import CODE_THEME, left_aligned_elements
from tests.bench.stats import Row, Samples, ratio_at_most

REPLY_BYTES = 50_000
DELTAS = 5_000
COLUMNS, ROWS = 100, 40


def long_reply(target_bytes: int = REPLY_BYTES) -> str:
    """Headings, paragraphs with inline markup, bullet and numbered lists, code blocks."""
    sections = []
    size = 0
    number = 0
    while size < target_bytes:
        number += 1
        bullets = "".join(f"- item {i} of section {number}: check the *parser* output\n" for i in range(1, 6))
        code = "".join(f"def step_{number}_{i}(value):\n    return value * {i}  # scale\n" for i in range(4))
        steps = "".join(f"{i}. ordered point {i} with `code`\n" for i in range(1, 4))
        section = (
            f"## Section {number}\n\n"
            f"This paragraph explains **step {number}** with `inline code` and a "
            f"[link](https://example.com/{number}).\nIt wraps over two lines, so it is reflowed.\n\n"
            f"{bullets}\n```python\n{code}```\n\n{steps}\n"
        )
        sections.append(section)
        size += len(section.encode("utf-8"))
    return "".join(sections)


def render_markdown_once(console: Console, text: str) -> None:
    """Print a whole markdown text in one go (the baseline the streaming path is measured against)."""
    from rich.markdown import Markdown

    markdown = Markdown(text, code_theme=CODE_THEME)
    markdown.elements = left_aligned_elements()  # as the renderer's: headings at the left
    console.print(markdown)


def virtual_terminal() -> Console:
    return Console(
        file=io.StringIO(), force_terminal=True, width=COLUMNS, height=ROWS, color_system="truecolor"
    )


def stream_through_renderer(text: str, deltas: int = DELTAS) -> float:
    """CPU seconds (all threads: the live region redraws on its own) to show `text` streamed."""
    renderer = make_renderer(virtual_terminal(), plain=False)
    cuts = [len(text) * i // deltas for i in range(deltas + 1)]
    started = time.process_time()
    renderer(RequestStarted())
    for start, end in itertools.pairwise(cuts):
        renderer(TextDelta(text[start:end]))
    renderer(TextDone())
    renderer(TurnEnded("done", text))
    return time.process_time() - started


def render_once(text: str) -> float:
    console = virtual_terminal()
    started = time.process_time()
    render_markdown_once(console, text)
    return time.process_time() - started


def streaming_render_row(runs: int) -> Row:
    os.environ["TERM"] = "xterm-256color"  # rich turns live display off on a dumb terminal
    text = long_reply()
    render_once(text)  # first use imports rich.markdown and the lexer: not what is measured
    measured, baseline = Samples(), Samples()
    for _ in range(runs):
        measured.add(stream_through_renderer(text))
        baseline.add(render_once(text))
    return Row("streaming render", measured, baseline, *ratio_at_most(3.0))
