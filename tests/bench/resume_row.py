"""`--continue` on a long session: time to interactive with a 2,000-message (~20 MB) transcript
to load and show, against a fresh start, both measured as `time_to_interactive_row` does."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mini_claude.core.config import DEFAULT_MODEL, memory_project_root, project_sessions_dir
from mini_claude.sessions.transcript.writer import TranscriptWriter
from tests.bench.stats import Row, Samples, ratio_at_most
from tests.bench.terminal_rows import HELP_SHOWN, MINI_CLAUDE, expect_answering, program_env, spawned
from tests.fake_api import FakeAnthropic

RESUMED_SHOWN = "resumed session"  # the rule under the last exchanges
MESSAGES = 2_000  # four per turn: question, tool call, its result, answer
TOOL_OUTPUT_BYTES = 38_000  # what a read_file of a mid-sized source file returns
LAST_QUESTION = "what is left to do on the parser?"


def write_long_session(project: Path, messages: int = MESSAGES) -> Path:
    """A transcript like a long day's work: each turn reads a file and answers about it."""
    project = project.resolve()
    writer = TranscriptWriter(
        project_sessions_dir(project), cwd=project, project=memory_project_root(project), model=DEFAULT_MODEL
    )
    source = "".join(f"def step_{i}(value):\n    return value * {i}  # scale it\n" for i in range(800))
    output = (source * (TOOL_OUTPUT_BYTES // len(source) + 1))[:TOOL_OUTPUT_BYTES]
    turns = messages // 4
    for turn in range(turns):
        question = LAST_QUESTION if turn == turns - 1 else f"question {turn}: how does step {turn} work?"
        tool_id = f"toolu_bench{turn:08d}"
        path = f"src/{turn}.py"
        call = {"type": "tool_use", "id": tool_id, "name": "read_file", "input": {"file_path": path}}
        writer.add("user", [{"type": "text", "text": question}])
        writer.add("assistant", [{"type": "text", "text": f"Reading {path}."}, call])
        writer.add("tool_results", [{"type": "tool_result", "tool_use_id": tool_id, "content": output}])
        answer = f"## Step {turn}\n\nIt **scales** it.\n\n- one\n- two\n\n```python\nstep_{turn}(2)\n```"
        writer.add("assistant", [{"type": "text", "text": answer}])
    writer.close()
    return writer.path


def time_to_help(args: list[str], env: dict[str, str], cwd: Path, *, resumed: bool) -> float:
    """Spawn → /help's output, /help typed at once (as `terminal_rows.time_to_help`, with args)."""
    started = time.perf_counter()
    with spawned(MINI_CLAUDE, args, env, cwd) as child:
        child.send("/help\r")
        if resumed:
            expect_answering(child, RESUMED_SHOWN)
        expect_answering(child, HELP_SHOWN)
        return time.perf_counter() - started


def continue_row(root: Path, home: Path, fake: FakeAnthropic, runs: int) -> Row:
    """Both sides start in one project holding only the long session (a fresh start leaves no file)."""
    print("--continue on a long session…", file=sys.stderr, flush=True)
    project = root / "long-session"
    project.mkdir()
    write_long_session(project)
    env = program_env(home, fake)
    measured, baseline = Samples(), Samples()
    for _ in range(runs):
        measured.add(time_to_help(["--continue"], env, project, resumed=True))
        baseline.add(time_to_help([], env, project, resumed=False))
    name = "`--continue` on a 2,000-message session (baseline: a fresh start)"
    return Row(name, measured, baseline, *ratio_at_most(2.0))
