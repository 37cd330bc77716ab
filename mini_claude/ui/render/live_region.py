"""The live region under what is printed while a turn runs, redrawn in place: the reply's unfinished
tail, the running command's latest output lines, the status line (spinner, what is happening, how
long, tokens so far, "esc to interrupt"), what the user types meanwhile (their messages queued
with Enter above the line being typed), and the permission mode when it is not the default (as
under the prompt; Shift+Tab cycles it here too). It never grows taller than the screen: the tail
gives way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mini_claude.core.untrusted import visible_text
from mini_claude.ui.render.live_tail import TailView
from mini_claude.ui.render.mode_words import CYCLE_HINT, MODE_WORDS
from mini_claude.ui.render.turn_progress import TurnProgress

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult
    from rich.segment import Segment
    from rich.text import Text

QUEUED_SHOWN = 3  # the latest queued messages; the others counted
DRAFT_LINES_SHOWN = 4  # the draft's last lines
OUTPUT_MARK = "  ⎿ "
QUEUED_MARK = "  ↳ queued: "
PROMPT = "  > "  # indented: the live line is not the prompt, which starts at the left
CURSOR = "▏"
RESERVED_ROWS = 2
SPINNER_CELLS = 3  # the spinner's frame and its space, and a cell to spare
MIN_LABEL_CHARS = 10
SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"  # rich's "dots", drawn here so that a frame can be cached
SPINNER_INTERVAL_S = 0.08  # kept free above the region so it can be redrawn in place


@dataclass(frozen=True)
class Typed:
    """What the user typed during the turn: messages queued with Enter, and the line being typed."""

    queued: tuple[str, ...] = ()
    draft: str = ""

    def __bool__(self) -> bool:
        return bool(self.queued or self.draft)


class LiveRegion:
    def __init__(
        self, tail: TailView, progress: TurnProgress, typed: Callable[[], Typed], mode: Callable[[], str]
    ) -> None:
        self.tail = tail
        self.progress = progress
        self.typed = typed
        self.mode = mode  # the permission mode's name
        self.text_open = False
        self.label: str | None = None  # None: no status line
        self._below_cache: tuple[object, list[Segment]] = (None, [])

    def wanted(self) -> bool:
        """A reply streaming or a status to show (typed text shows with them, never alone: once
        the turn is over it is the prompt's)."""
        return self.text_open or self.label is not None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        below = self._below(console, options.max_width)
        rows = below.count(Segment.line()) + 1 if below else 0
        if self.text_open:
            room = max(1, (options.height or options.size.height) - RESERVED_ROWS - rows)
            yield from console.render(self.tail, options.update(height=room))
            if below:
                yield Segment.line()
        yield from below

    def _below(self, console: Console, width: int) -> list[Segment]:
        """The lines under the tail, as segments; drawn again only when what they say changed (the
        region is drawn at every print above it, and a reply prints often)."""
        from rich.text import Text

        frame = SPINNER_FRAMES[int(console.get_time() / SPINNER_INTERVAL_S) % len(SPINNER_FRAMES)]
        output = self.progress.running_output() if self.label is not None else None
        shown = tuple(output.shown()) if output is not None else ()
        suffix = self.progress.suffix() if self.label is not None else ""
        key = (self.label, suffix, frame, shown, self.typed(), self.mode(), width)
        if key == self._below_cache[0]:
            return self._below_cache[1]
        lines: list[Text] = []
        if self.label is not None:  # what runs, then what it prints under it
            lines.append(self._status(frame, " " + suffix, width))
            for index, line in enumerate(shown):
                mark = OUTPUT_MARK if index == 0 else " " * len(OUTPUT_MARK)
                lines.append(Text(mark + line, style="dim", no_wrap=True, overflow="ellipsis"))
        lines += self._typed_lines()
        if (words := MODE_WORDS.get(key[5])) is not None:
            mode_line = Text.assemble(
                (words.text, f"{words.emphasis} {words.colour}"), " ", (CYCLE_HINT, "italic")
            )
            lines.append(mode_line)
        segments: list[Segment] = []
        if lines:
            options = console.options.update(width=width, no_wrap=True, overflow="ellipsis")
            segments = list(console.render(Text("\n").join(lines), options))
            while segments and segments[-1].text == "\n":  # the caller lays out the lines around
                segments.pop()
        self._below_cache = (key, segments)
        return segments

    def _status(self, frame: str, suffix: str, width: int) -> Text:
        from rich.text import Text

        room = max(MIN_LABEL_CHARS, width - len(suffix) - SPINNER_CELLS)
        label = self.label or ""
        if len(label) > room:  # the time and the interrupt hint stay in sight
            label = label[: room - 1] + "…"
        status = Text.assemble((frame, "cyan"), " ", (label, "dim"), (suffix, "dim"))
        status.no_wrap, status.overflow = True, "ellipsis"
        return status

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
