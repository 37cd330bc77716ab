"""The adversarial suite's report: every test names its case with `@case(category, expected)`,
and `pytest tests/adversarial --faults-table` (`make faults`) prints one row per case with its
outcome after the run."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.adversarial.cases import CATEGORIES

HERE = Path(__file__).parent
EXPECTED_WIDTH = 70  # the expected column wraps at this width
DITTO = "(same as above)"


@dataclass
class _Row:
    case: str
    category: str
    expected: str
    outcome: str = "not run"


_rows: dict[str, _Row] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--faults-table",
        action="store_true",
        help="after the run, print the adversarial cases: case, category, expected, outcome",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "case(category, expected): an adversarial case, for the faults table")


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:  # after -k / -m deselection: only the cases that will run
        if not item.path.is_relative_to(HERE):
            continue
        marker = item.get_closest_marker("case")
        if marker is None:
            raise pytest.UsageError(f"{item.nodeid}: every adversarial test needs @case(category, expected)")
        name = item.name.removeprefix("test_")
        _rows[item.nodeid] = _Row(name, marker.kwargs["category"], marker.kwargs["expected"])


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    row = _rows.get(report.nodeid)
    if row is None:
        return
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        row.outcome = "skipped: " + reason.removeprefix("Skipped: ")
    elif report.failed:
        row.outcome = "FAILED" if report.when == "call" else f"ERROR ({report.when})"
    elif report.when == "call":
        row.outcome = "passed"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if not config.getoption("faults_table", default=False) or not _rows:
        return
    rows = sorted(_rows.values(), key=lambda row: CATEGORIES.index(row.category))  # stable: file order
    write = terminalreporter.write_line
    terminalreporter.write_sep("=", f"adversarial cases ({len(rows)})")
    case_width = max(len(row.case) for row in rows)
    header = f"{'case':<{case_width}}  {'category':<8}  {'expected':<{EXPECTED_WIDTH}}  outcome"
    write(header)
    write("-" * len(header))
    previous = None
    for row in rows:
        # The parameters of one test share its expectation: say it once.
        same = previous is not None and (previous.case.split("[")[0], previous.expected) == (
            row.case.split("[")[0],
            row.expected,
        )
        expected = [DITTO] if same else textwrap.wrap(row.expected, EXPECTED_WIDTH) or [""]
        write(f"{row.case:<{case_width}}  {row.category:<8}  {expected[0]:<{EXPECTED_WIDTH}}  {row.outcome}")
        for more in expected[1:]:
            write(f"{'':<{case_width}}  {'':<8}  {more}")
        previous = row
    counts: dict[str, int] = {}
    for row in rows:
        key = row.outcome.split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    write(
        f"{len(rows)} cases: " + ", ".join(f"{count} {outcome}" for outcome, count in sorted(counts.items()))
    )
