"""A long scripted conversation for the context-window tests and `make bench`: turns that read and
search real project files of varied sizes and answer at varied lengths, against a fake server that
counts a request's tokens by its size (as the real one counts them) and refuses, with the real
API's 400, any request that does not fit the window."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.agent.request_view import size_of
from mini_claude.core import prompts
from mini_claude.core.events import ContextCompacted, Event, Notice
from tests.agent_harness import Harness
from tests.fake_api import FakeAnthropic, RecordedRequest, Reply, text_reply, tool_reply

BYTES_PER_TOKEN = 4  # how the fake counts
SUMMARY_OPENING = prompts.load("compact.md").split("\n", 1)[0]
MODULES = 12
ANSWER_DELTA_CHARS = 256
REPLY_WORDS = ("the", "parser", "keeps", "state", "between", "calls", "so", "we", "cache", "tokens")


def is_summary_request(request: RecordedRequest) -> bool:
    last = request.messages[-1]["content"] if request.messages else []
    return any(isinstance(b, dict) and str(b.get("text", "")).startswith(SUMMARY_OPENING) for b in last)


def summary_reply(request: RecordedRequest) -> Reply | None:
    """The fake model's summary: about 1.2 KB, whatever it is asked to summarise."""
    if not is_summary_request(request):
        return None
    decisions = (f"- decision {n}: keep the parser's state between calls (module_{n}.py)" for n in range(18))
    body = "\n".join(decisions)
    return text_reply(f"1. **Goals and requests**: refactor the parser.\n{body}\n")


def write_project(root: Path) -> None:
    """src/module_0.py … module_11.py, from 20 to 240 lines (about 1 to 12 KB of read_file output)."""
    (root / "src").mkdir(exist_ok=True)
    for k in range(MODULES):
        line = "def function_{k}_{n}(value):  # keeps the parser state, step {n}\n"
        lines = (line.format(k=k, n=n) for n in range(20 + 20 * k))
        (root / "src" / f"module_{k}.py").write_text("".join(lines))


def script_turn(fake: FakeAnthropic, turn: int) -> str:
    """Queue turn `turn`'s replies (0 to 2 tool calls, then an answer); return what the user types."""
    calls = turn % 3
    for step in range(calls):
        module = (turn * 5 + step * 7) % MODULES
        if step == 1 and turn % 2:
            fake.stream_replies.append(tool_reply("grep_search", {"pattern": f"function_{module}_1"}))
        else:
            fake.stream_replies.append(tool_reply("read_file", {"file_path": f"src/module_{module}.py"}))
    words = 40 + (turn * 37) % 200
    answer = " ".join(REPLY_WORDS[(turn + n) % 10] for n in range(words))
    # In 256-character deltas, not 16: the window is on trial here, not streaming (which has tests
    # of its own), and a delta costs the same to send and parse whatever its size.
    fake.stream_replies.append(text_reply(answer, chunk_size=ANSWER_DELTA_CHARS))
    return f"turn {turn}: please look at module {turn % MODULES} and tell me " + "what it does " * (turn % 20)


@dataclass
class LongRun:
    requests: list[RecordedRequest] = field(default_factory=list)
    compactions: list[ContextCompacted] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    endings: list[str] = field(default_factory=list)
    whole_tokens: int = 0  # what the whole stored conversation would take in one request

    @property
    def peak_tokens(self) -> int:
        return max(r.prompt_tokens for r in self.requests)

    @property
    def refused(self) -> list[RecordedRequest]:
        """Requests the fake answered with a 400: malformed, or too long for the window."""
        return [r for r in self.requests if r.validation_error is not None or r.too_long]


def run_long_conversation(fake: FakeAnthropic, project: Path, turns: int, window: int) -> LongRun:
    """`turns` turns through a real session (MINI_CLAUDE_CONTEXT_WINDOW must be `window` already)."""
    write_project(project)
    fake.bytes_per_token, fake.context_window = BYTES_PER_TOKEN, window
    fake.responder = summary_reply
    run = LongRun()

    def watch(event: Event) -> None:
        if isinstance(event, ContextCompacted):
            run.compactions.append(event)
        elif isinstance(event, Notice) and event.level != "info":
            run.warnings.append(event.text)

    harness = Harness(on_event=watch).start()
    first = len(fake.requests)
    for turn in range(turns):
        run.endings.append(harness.turn(script_turn(fake, turn)).reason)
    run.requests = fake.requests[first:]
    parts = harness.session.agent.request_parts()
    run.whole_tokens = (size_of(parts.messages) + parts.fixed_bytes) // BYTES_PER_TOKEN
    return run
