"""Outside text on its way to the user: the events a front end shows and the replies it prints,
made visible by the one gate (`untrusted.visible_text`) before anything is measured or printed.

The model still gets the real bytes (tool results, the conversation); only what is shown changes.
"""

from __future__ import annotations

import re
from dataclasses import replace

from mini_claude.core.events import (
    Event,
    MemoriesRecalled,
    Notice,
    SubagentProgress,
    ToolFinished,
    ToolOutput,
    ToolPreparing,
    ToolStarted,
)
from mini_claude.core.untrusted import MULTILINE_KEEP, visible_lines, visible_text

_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


def visible_event(event: Event) -> Event:
    """`event` with every outside string in it made visible; each stays on one line (a tool name,
    a summary, a server's error message, a file name cannot fake another line of output)."""
    match event:
        case ToolPreparing(name=name):
            return replace(event, name=visible_text(name))
        case ToolFinished(name=name, summary=summary, detail=detail):
            lines = tuple(visible_text(without_styles(line)) for text in detail for line in text.split("\n"))
            return replace(
                event, name=visible_text(name), summary=visible_text(first_line(summary)), detail=lines
            )
        case ToolStarted(name=name, summary=summary):
            return replace(event, name=visible_text(name), summary=visible_text(first_line(summary)))
        case ToolOutput(text=text):  # carriage returns kept: the live tail lets a line redraw itself
            return replace(event, text=visible_text(without_styles(text), keep="\n\r\t"))
        case Notice(text=text):
            return replace(event, text=visible_text(text))
        case SubagentProgress(agent=agent, task=task):
            return replace(event, agent=visible_text(agent), task=visible_text(first_line(task)))
        case MemoriesRecalled(file_names=names):
            return replace(event, file_names=tuple(visible_text(name) for name in names))
    return event


class VisibleStream:
    """Streamed text (a reply arriving in deltas) made visible piece by piece, line breaks and
    tabs kept. A carriage return is held back until the next piece says whether it ends a line
    (`\\r\\n`, shown as a line break) or stands alone (written out: it would let a line overwrite
    itself)."""

    def __init__(self) -> None:
        self._held_return = False

    def feed(self, text: str) -> str:
        if self._held_return:
            text = "\r" + text
            self._held_return = False
        if text.endswith("\r"):
            text, self._held_return = text[:-1], True
        return visible_lines(text)

    def finish(self) -> str:
        """What is still held back (a carriage return at the very end), made visible."""
        held, self._held_return = self._held_return, False
        return visible_text("\r", keep=MULTILINE_KEEP) if held else ""


def without_styles(text: str) -> str:
    """A command's output without the colour and cursor codes it printed (ESC [ … letter): shown
    live and collapsed, they would be written out as text; they carry no words."""
    return _CSI.sub("", text)


def first_line(text: str) -> str:
    """A summary's first line, with ` …` when more follows (a line per tool call)."""
    lines = [line for line in text.strip().split("\n") if line.strip()]
    return lines[0].strip() + (" …" if len(lines) > 1 else "") if lines else ""
