"""The live region under what is printed while a turn runs, redrawn in place: the reply's unfinished
tail, the running command's latest output lines, the status line (spinner, what is happening, how
long, tokens so far, "esc to interrupt"), and what the user types meanwhile (their messages queued
with Enter above the line being typed). It never grows taller than the screen: the tail gives way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mini_claude.core.untrusted import visible_text
from mini_claude.ui.render.live_tail import TailView
from mini_claude.ui.render.turn_progress import TurnProgress

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.spinner import Spinner
    from rich.text import Text

QUEUED_SHOWN = 3  # the latest queued messages; the others counted
DRAFT_LINES_SHOWN = 4  # the draft's last lines
OUTPUT_MARK = "  ⎿ "
QUEUED_MARK = "  ↳ queued: "
PROMPT = "  > "  # indented: the live line is not the prompt, which starts at the left
CURSOR = "▏"
RESERVED_ROWS = 2
SPINNER_CELLS = 3  # the spinner's frame and its space, and a cell to spare
MIN_LABEL_CHARS = 10  # kept free above the region so it can be redrawn in place


@dataclass(frozen=True)
class Typed:
    """What the user typed during the turn: messages queued with Enter, and the line being typed."""

    queued: tuple[str, ...] = ()
    draft: str = ""

    def __bool__(self) -> bool:
        return bool(self.queued or self.draft)


class LiveRegion:
    def __init__(self, tail: TailView, progress: TurnProgress, typed: Callable[[], Typed]) -> None:
        self.tail = tail
        self.progress = progress
        self.typed = typed
        self.text_open = False
        self.label: str | None = None  # None: no status line
        self._spinner: Spinner | None = None

    def wanted(self) -> bool:
        """A reply streaming or a status to show (typed text shows with them, never alone: once
        the turn is over it is the prompt's)."""
        return self.text_open or self.label is not None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment
        from rich.text import Text

        below: list[Text] = []
        if self.label is not None:  # what runs, then what it prints under it
            below.append(self._status(console, options.max_width))
            output = self.progress.running_output()
            for index, line in enumerate(output.shown() if output is not None else []):
                mark = OUTPUT_MARK if index == 0 else " " * len(OUTPUT_MARK)
                below.append(Text(mark + line, style="dim", no_wrap=True, overflow="ellipsis"))
        below += self._typed_lines()
        height = options.height or options.size.height
        if self.text_open:
            room = max(1, height - RESERVED_ROWS - len(below))
            yield from console.render(self.tail, options.update(height=room))
            if below:
                yield Segment.line()
        if below:
            yield from console.render(
                Text("\n").join(below), options.update(no_wrap=True, overflow="ellipsis")
            )

    def _status(self, console: Console, width: int) -> Text:
        from rich.spinner import Spinner
        from rich.text import Text

        suffix = " " + self.progress.suffix()
        room = max(MIN_LABEL_CHARS, width - len(suffix) - SPINNER_CELLS)
        label_text = self.label or ""
        if len(label_text) > room:  # the time and the interrupt hint stay in sight
            label_text = label_text[: room - 1] + "…"
        label = Text.assemble((label_text, "dim"), (suffix, "dim"))
        label.no_wrap, label.overflow = True, "ellipsis"
        if self._spinner is None:
            self._spinner = Spinner("dots", style="cyan")
        self._spinner.update(text=label)
        rendered = self._spinner.render(console.get_time())
        return rendered if isinstance(rendered, Text) else label

    def _typed_lines(self) -> list[Text]:
        from rich.text import Text

        typed = self.typed()
        if not typed:
            return []
        lines = []
        hidden = len(typed.queued) - QUEUED_SHOWN
        if hidden > 0:
            lines.append(Text(f"  … {hidden} more queued", style="dim"))
        for message in typed.queued[-QUEUED_SHOWN:]:
            first = visible_text(message.split("\n")[0]) + (" …" if "\n" in message else "")
            lines.append(Text(QUEUED_MARK + first, style="dim", no_wrap=True, overflow="ellipsis"))
        draft = typed.draft.split("\n")[-DRAFT_LINES_SHOWN:]
        for index, line in enumerate(draft):
            start = PROMPT if index == 0 else " " * len(PROMPT)  # later lines line up with the first
            cursor = CURSOR if index == len(draft) - 1 else ""
            lines.append(Text(start + visible_text(line) + cursor, no_wrap=True, overflow="ellipsis"))
        return lines
