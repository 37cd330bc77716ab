"""Samples, rows and the table: medians with their spread, ratios, targets, PASS/FAIL."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Samples:
    """One number per run: seconds, or a share (0-1) or a count when `unit` says so."""

    values: list[float] = field(default_factory=list)
    unit: str = "s"

    def add(self, seconds: float) -> None:
        self.values.append(seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def describe(self) -> str:
        shown = {"s": _ms, "share": _percent}.get(self.unit, _count)
        return f"{shown(self.median)} [{shown(min(self.values))}–{shown(max(self.values))}]"


@dataclass
class Row:
    name: str
    measured: Samples
    baseline: Samples
    target: str  # shown as is
    check: Callable[[Row], bool]

    @property
    def ratio(self) -> float:
        return self.measured.median / self.baseline.median if self.baseline.median else float("inf")

    @property
    def passed(self) -> bool:
        return self.check(self)


def ratio_at_most(limit: float) -> tuple[str, Callable[[Row], bool]]:
    return f"≤ {limit:g}×", lambda row: row.ratio <= limit


def seconds_at_most(limit: float) -> tuple[str, Callable[[Row], bool]]:
    return f"≤ {_ms(limit)} abs.", lambda row: row.measured.median <= limit


def share_at_least(limit: float) -> tuple[str, Callable[[Row], bool]]:
    return f"≥ {_percent(limit)} abs.", lambda row: row.measured.median >= limit


def extra_at_most(limit: float) -> tuple[str, Callable[[Row], bool]]:
    """At most `limit` more than the baseline (a count per something, e.g. calls per message)."""
    return f"≤ +{limit:g} abs.", lambda row: row.measured.median - row.baseline.median <= limit


def _ratio(row: Row) -> str:
    return f"{row.ratio:.2f}×" if row.baseline.median else "—"


def _count(value: float) -> str:
    return f"{value:.2f}"


def _percent(share: float) -> str:
    return f"{share * 100:.1f}%"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.1f} ms"


HEADERS = ("row", "measured: median [min–max]", "baseline: median [min–max]", "ratio", "target", "result")


def table(rows: list[Row]) -> str:
    """A markdown table (it reads fine in a terminal and pastes into the README as is)."""
    cells = [
        (r.name, r.measured.describe(), r.baseline.describe(), _ratio(r), r.target,
         "PASS" if r.passed else "FAIL")
        for r in rows
    ]  # fmt: skip
    widths = [max(len(str(c[i])) for c in [HEADERS, *cells]) for i in range(len(HEADERS))]
    lines = [_line(HEADERS, widths), _line(tuple("-" * w for w in widths), widths)]
    lines += [_line(c, widths) for c in cells]
    return "\n".join(lines)


def _line(cells: tuple[str, ...], widths: list[int]) -> str:
    return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"
