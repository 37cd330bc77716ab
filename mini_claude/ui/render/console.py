"""The REPL's console and renderer for each mode (plain or live), and the console's one rule:
every plain string it prints passes the terminal gate (`untrusted.visible_text`) first, so a
command's message quoting a memory, a file name or a model name cannot carry an escape code to the
terminal, whoever writes the next command. Renderables (markdown, the lines the renderer builds)
are made of text that was made visible before it was laid out."""

from __future__ import annotations

import os
from typing import Any, TextIO

from rich.console import Console

from mini_claude.core.untrusted import visible_lines
from mini_claude.ui.render.renderer import PlainRenderer, Renderer


class VisibleConsole(Console):
    def print(self, *objects: Any, **options: Any) -> None:
        super().print(*(visible_lines(o) if isinstance(o, str) else o for o in objects), **options)


def create_console(*, plain: bool, file: TextIO | None = None) -> Console:
    """Interactive: rich's defaults (it honours the terminal width), without colour under NO_COLOR
    (bold, underline and dim stay). Plain: no colour, no styles, no cursor tricks and no hard
    wrapping, whatever `file` is. Either way strings are printed as text (no markup, no emoji
    codes) after passing the terminal gate (`VisibleConsole`)."""
    if plain:
        return VisibleConsole(
            file=file, color_system=None, no_color=True, force_terminal=False, force_interactive=False,
            highlight=False, emoji=False, markup=False, soft_wrap=True,
        )  # fmt: skip
    # https://no-color.org: NO_COLOR set to anything but the empty string.
    no_color = bool(os.environ.get("NO_COLOR"))
    return VisibleConsole(file=file, highlight=False, emoji=False, markup=False, no_color=no_color)


def plain_mode_wanted(*, flag: bool, stdout: TextIO) -> bool:
    """--plain, or output that is not a terminal. NO_COLOR is not a reason: it removes colour only."""
    return flag or not stdout.isatty()


def make_renderer(console: Console, *, plain: bool) -> Renderer:
    if plain:
        return PlainRenderer(console)
    from mini_claude.ui.render.live_renderer import LiveRenderer  # rich's live display: only when used

    return LiveRenderer(console)
