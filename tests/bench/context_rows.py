"""A 400-turn scripted conversation in a small context window, in-process through a real session,
against its own fake server that counts a request's tokens by its size and refuses, as the real API
does, any request over the window: the largest request against the window, and requests refused."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.bench.stats import Row, Samples, ratio_at_most
from tests.fake_api import FakeAnthropic
from tests.long_conversation import run_long_conversation

TURNS = 400
WINDOW = 20_000  # tokens: about six times the system prompt and tool definitions
MAX_TOKENS = 2_000


class Count(Samples):
    """Samples that are counts of `unit`, not seconds."""

    def __init__(self, value: int, unit: str) -> None:
        super().__init__([float(value)])
        self.unit = unit

    def describe(self) -> str:
        return f"{self.median:,.0f} {self.unit}"


@contextlib.contextmanager
def _session_environment(fake: FakeAnthropic, project: Path) -> Iterator[None]:
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    for key in [k for k in os.environ if k.startswith(("ANTHROPIC_", "MINI_CLAUDE_"))]:
        del os.environ[key]
    os.environ.update(
        ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY="bench-key",
        MINI_CLAUDE_CONTEXT_WINDOW=str(WINDOW), MINI_CLAUDE_MAX_TOKENS=str(MAX_TOKENS),
    )  # fmt: skip
    os.chdir(project)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def long_conversation_rows(root: Path) -> list[Row]:
    print(f"{TURNS}-turn conversation…", file=sys.stderr, flush=True)
    project = root / "long-conversation"
    project.mkdir()
    with FakeAnthropic() as fake, _session_environment(fake, project):
        run = run_long_conversation(fake, project, TURNS, WINDOW)
    finished = run.endings.count("done") == TURNS and not run.warnings
    print(
        f"  {len(run.requests):,} requests, {len(run.compactions)} compactions; the whole conversation "
        f"would take {run.whole_tokens:,} tokens ({run.whole_tokens / WINDOW:.0f}× the window)",
        file=sys.stderr, flush=True,
    )  # fmt: skip
    peak = Row(
        f"{TURNS} turns: largest request", Count(run.peak_tokens, "tokens"), Count(WINDOW, "tokens window"),
        *ratio_at_most(1.0),
    )  # fmt: skip
    refused = Row(
        f"{TURNS} turns: requests refused", Count(len(run.refused), "refused"),
        Count(len(run.requests), "sent"), "0 refused", lambda row: row.measured.median == 0 and finished,
    )  # fmt: skip
    return [peak, refused]
