"""The lines of a permission question's target, read from either end as the question needs them:
a command of a million lines costs the rows on screen, not a pass over every line, and a line of
ten million characters costs a screenful of each of its ends. Line breaks are found and runs of
blank lines measured by string and regex scans, so every count the question gives (lines, blank
lines, characters left out) stays exact.

A blank line is one made only of characters drawn as nothing (untrusted's one definition: spaces
of any kind, controls, invisible characters); two or more in a row are one item with their count.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

from mini_claude.core.untrusted import DRAWN_AS_NOTHING_CLASS, unicode_pattern
from mini_claude.safety.change_preview import blank_runs_marked, named_blanks

BLANK_RUN_MIN_LINES = 2  # this many blank lines in a row are shown as one row with their count
TAB_SIZE = 8


@dataclass(frozen=True)
class TargetLine:
    number: int
    text: str  # shown: made visible, long blank runs marked, tabs expanded (its start, when cut)
    cut_chars: int = 0  # characters in the middle of a very long line that are not laid out
    end_text: str = ""  # shown: the end of a very long line

    @property
    def first(self) -> int:
        return self.number

    @property
    def last(self) -> int:
        return self.number


@dataclass(frozen=True)
class BlankLines:
    first: int
    last: int
    kinds: str  # the characters in them but line breaks, each once, in the order they come

    @property
    def note(self) -> str:
        count = self.last - self.first + 1
        plain = not self.kinds.strip(" \t")
        return f"({count:,} blank lines)" if plain else f"({count:,} blank lines: {named_blanks(self.kinds)})"


Item = TargetLine | BlankLines


class TargetText:
    """`target` as numbered lines (the line break ending the last line is not a line of its own).
    `slice_chars`: a line longer than twice this is laid out as its first and last `slice_chars`
    characters and a count of the rest; None (the default) lays out every character."""

    def __init__(self, target: str) -> None:
        self.body = target  # not copied: a command may be tens of megabytes
        self.end = len(target) - 1 if target.endswith("\n") else len(target)
        self.count = target.count("\n", 0, self.end) + 1
        self.slice_chars: int | None = None
        self._blanks = unicode_pattern(f"[{DRAWN_AS_NOTHING_CLASS}]*")  # line breaks are among them
        self._blanks_before = unicode_pattern(f"(?r)[{DRAWN_AS_NOTHING_CLASS}]*")

    def forward(self) -> Iterator[Item]:
        """The items from the first line on."""
        body, number, start = self.body, 1, 0
        while number <= self.count:
            end = body.find("\n", start, self.end)
            end = self.end if end == -1 else end
            if self._is_blank(start, end):
                blank_end = self._blank_end(start, self.end)
                if blank_end == self.end:
                    last, after = self.count, self.end + 1
                else:
                    newline = body.rfind("\n", start, blank_end)
                    last, after = number + body.count("\n", start, newline), newline + 1
                if last - number + 1 >= BLANK_RUN_MIN_LINES:
                    yield BlankLines(number, last, self._kinds(start, after - 1))
                    number, start = last + 1, after
                    continue
            yield self._line(number, start, end)
            number, start = number + 1, end + 1

    def backward(self) -> Iterator[Item]:
        """The items from the last line back."""
        body, number, end = self.body, self.count, self.end
        while number >= 1:
            start = body.rfind("\n", 0, end) + 1
            if self._is_blank(start, end):
                blank_start = self._blank_start(end)
                if blank_start > 0 and body[blank_start - 1] != "\n":
                    blank_start = body.index("\n", blank_start) + 1  # that line holds ink: not blank
                first = number - body.count("\n", blank_start, end)
                if number - first + 1 >= BLANK_RUN_MIN_LINES:
                    yield BlankLines(first, number, self._kinds(blank_start, end))
                    number, end = first - 1, blank_start - 1
                    continue
            yield self._line(number, start, end)
            number, end = number - 1, start - 1

    def _is_blank(self, start: int, end: int) -> bool:
        return self._blank_end(start, end) == end

    def _blank_end(self, start: int, end: int) -> int:
        """Where the run of blank characters that starts at `start` ends, at most at `end`."""
        run = self._blanks.match(self.body, start, end)
        return run.end() if run else start  # `*`: it always matches, if only nothing

    def _blank_start(self, end: int) -> int:
        """Where the run of blank characters that ends at `end` starts (matched backwards)."""
        run = self._blanks_before.match(self.body, 0, end)
        return run.start() if run else end

    def _kinds(self, start: int, end: int) -> str:
        kinds = dict.fromkeys(islice(self.body, start, end))  # no copy of a million blank lines
        kinds.pop("\n", None)
        return "".join(kinds)

    def _line(self, number: int, start: int, end: int) -> TargetLine:
        size = self.slice_chars
        if size is None or end - start <= 2 * size:
            return TargetLine(number, _shown(self.body[start:end]))
        head, tail = self.body[start : start + size], self.body[end - size : end]
        return TargetLine(number, _shown(head), end - start - 2 * size, _shown(tail))


def _shown(raw: str) -> str:
    """A line as the question shows it (the gate is here too)."""
    return blank_runs_marked(raw, keep="\t").expandtabs(TAB_SIZE)
