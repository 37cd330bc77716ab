"""Tool calls side by side: one reply's explore agents (each waiting on its model server) and
reads, wall time with up to 4 at once vs MINI_CLAUDE_PARALLEL_TOOLS=1 (one at a time)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from mini_claude.app.session import build_session
from mini_claude.core.config import load_settings
from mini_claude.core.events import Event
from tests.bench.context_rows import _session_environment
from tests.bench.stats import Row, Samples, ratio_at_most
from tests.fake_api import FakeAnthropic, RecordedRequest, Reply, multi_tool_reply, text_reply

AGENTS = 4
AGENT_LATENCY_S = 0.5  # the model server's answer to each sub-agent, as the recall rows' latency
READS = 8
READ_BYTES = 32 * 1024


def _turn(fake: FakeAnthropic, calls: list[tuple[str, dict[str, object]]], one_at_a_time: bool) -> float:
    """Wall seconds of one turn whose first reply makes `calls`."""
    os.environ["MINI_CLAUDE_PARALLEL_TOOLS"] = "1" if one_at_a_time else "4"
    os.environ["MINI_CLAUDE_MEMORY"] = "off"  # no recall side queries: only the calls are timed
    os.environ["MINI_CLAUDE_CONTEXT_WINDOW"] = "200000"  # the reads fit: no compaction
    events: list[Event] = []
    session = build_session(load_settings(), sink=events.append, ask=None)
    fake.stream_replies.extend([multi_tool_reply(calls), text_reply("done")])
    try:
        started = time.perf_counter()
        ended = session.agent.run_turn("go")
        took = time.perf_counter() - started
    finally:
        session.close()
    assert ended.reason == "done", ended
    return took


def parallel_rows(root: Path, runs: int) -> list[Row]:
    project = root / "parallel"
    project.mkdir()
    for i in range(READS):
        (project / f"part{i}.txt").write_text(
            f"line {i} of a long file\n" * (READ_BYTES // 24), encoding="utf-8"
        )
    with FakeAnthropic() as fake, _session_environment(fake, project):

        def slow_subagents(request: RecordedRequest) -> Reply | None:
            system = str(request.system)
            if request.stream and "You were started by the main agent" in system:
                return text_reply("found it", delay=AGENT_LATENCY_S)
            return None

        fake.responder = slow_subagents
        agents = [("agent", {"description": f"look {i}", "prompt": f"look {i}", "subagent_type": "explore"})
                  for i in range(AGENTS)]  # fmt: skip
        reads = [("read_file", {"file_path": f"part{i}.txt"}) for i in range(READS)]
        rows = []
        for name, calls, limit in (
            (f"{AGENTS} explore agents at once", agents, 0.5),
            (f"{READS} reads of 32 KB at once", reads, 1.2),
        ):
            _turn(fake, calls, one_at_a_time=False)  # warm: the SDK's import is not what is measured
            measured, baseline = Samples(), Samples()
            for _ in range(runs):
                measured.add(_turn(fake, calls, one_at_a_time=False))
                baseline.add(_turn(fake, calls, one_at_a_time=True))
            rows.append(Row(name, measured, baseline, *ratio_at_most(limit)))
    return rows
