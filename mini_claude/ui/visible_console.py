"""The REPL's console: every plain string it prints passes the one gate (`untrusted.visible_text`)
first, so a command's message quoting a memory, a file name or a model name cannot carry an
escape code to the terminal, whoever writes the next command. Renderables (markdown, the lines
the renderer builds) are made of text that was made visible before it was laid out."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from mini_claude.untrusted import visible_lines


class VisibleConsole(Console):
    def print(self, *objects: Any, **options: Any) -> None:
        super().print(*(visible_lines(o) if isinstance(o, str) else o for o in objects), **options)
