"""What the adversarial tests share: the real tools as a session wires them, a scripted user at
the permission prompt, and snapshots that show nothing on disk changed."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mini_claude import config
from mini_claude.memory.store import MemoryStore
from mini_claude.memory.writer import MemoryStoreWriter
from mini_claude.permissions import PermissionRequest, Permissions
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.registry import default_registry
from tests.agent_harness import Harness, result_text, tool_results_in, wait_for_recalls
from tests.fake_api import FakeAnthropic, RecordedRequest, Reply, text_reply

REGISTRY = default_registry()


class ScriptedUser:
    """The UI's permission prompt: answers from a script (then "n"), remembers every question."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.questions: list[PermissionRequest] = []

    def __call__(self, request: PermissionRequest) -> str:
        self.questions.append(request)
        return self.answers.pop(0) if self.answers else "n"


class Tools:
    """The real file, search and shell tools with real permissions and the memory writer."""

    def __init__(self, project_dir: Path, mode: str = "ask", *answers: str) -> None:
        self.store = MemoryStore(config.project_memory_dir())
        self.memory_dir = self.store.root
        self.user = ScriptedUser(*answers)
        permissions = Permissions(
            project_dir,
            mode=mode,
            ask=self.user,
            memory_dir=self.store.root,
            protected_dirs=config.protected_dirs(),
        )
        self.ctx = ToolContext(project_dir.resolve(), permissions, MemoryStoreWriter(self.store))

    def run(self, name: str, **tool_input: object) -> ToolResult:
        return REGISTRY.run(name, tool_input, self.ctx)


def memory_text(
    name: str = "a fact",
    description: str = "what it is for",
    memory_type: str = "project",
    body: str = "Body.\n",
) -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {memory_type}\n---\n{body}"


def snapshot(root: Path) -> dict[str, object]:
    """Every entry below `root`: file bytes, a symlink's target, a FIFO as such (nothing followed)."""
    state: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            rel = str(path.relative_to(root))
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                state[rel] = "dir"
            elif path.is_file():
                size = path.stat().st_size
                state[rel] = path.read_bytes() if size < 1 << 20 else ("large file", size)
            else:
                state[rel] = "special"
    return state


def snapshot_but_transcripts(root: Path) -> dict[str, object]:
    """`snapshot(root)` without this project's session transcripts, which every session writes."""
    sessions = config.project_sessions_dir()
    return {rel: state for rel, state in snapshot(root).items() if not (root / rel).is_relative_to(sessions)}


class TookTooLong(BaseException):
    """Raised by must_finish_within. Not a TimeoutError: that is an OSError, which the code under
    test may catch and carry on from, so a hang would pass as a slow success."""


@contextlib.contextmanager
def must_finish_within(seconds: int) -> Iterator[None]:
    """Fail instead of hanging the suite (a FIFO or a device opened the wrong way blocks forever)."""

    def fail(*_: object) -> None:
        raise TookTooLong(f"did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- a whole session against the fake model server ---------------------------------------------------


def main_calls(fake: FakeAnthropic) -> list[RecordedRequest]:
    """The agent's own (streamed) requests, without the memory-recall side queries."""
    return [r for r in fake.requests if r.stream]


def side_queries(fake: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake.requests if not r.stream]


def system_text(request: RecordedRequest) -> str:
    system = request.system
    return system if isinstance(system, str) else "".join(block["text"] for block in system or [])


def user_texts(request: RecordedRequest) -> list[str]:
    """Every text the request carries in user messages (plain text blocks and tool results)."""
    texts = []
    for message in request.messages:
        if message["role"] != "user" or not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            if block.get("type") == "text":
                texts.append(block["text"])
            elif block.get("type") == "tool_result":
                texts.append(result_text(block))
    return texts


def reminders_in(request: RecordedRequest) -> list[str]:
    return [text for text in user_texts(request) if text.startswith("<system-reminder>")]


def last_tool_result(fake: FakeAnthropic) -> dict[str, Any]:
    [result] = tool_results_in(main_calls(fake)[-1])
    return result


def choose(*file_names: str, **kw: Any) -> Reply:
    """The side model's answer selecting these memories."""
    names = ", ".join(f'"{name}"' for name in file_names)
    return text_reply(f'{{"selected_memories": [{names}]}}', **kw)


def hold_first_reply_until_recall_settles(harness: Harness) -> Callable[[RecordedRequest], None]:
    """A responder that makes recall land in the same turn, however slow the side query thread."""

    def responder(request: RecordedRequest) -> None:
        if request.stream:
            wait_for_recalls()
        return None

    return responder


def assert_next_turn_works(harness: Harness, fake: FakeAnthropic) -> None:
    """After a fault, a normal turn succeeds and the fake finds its request a valid conversation."""
    fake.responder = None
    fake.stream_replies.clear()
    fake.stream_replies.append(text_reply("all good now"))
    ended = harness.turn("are you still there?")
    assert ended.reason == "done", harness.events
    assert ended.final_text == "all good now"
    last = main_calls(fake)[-1]
    assert last.validation_error is None
    assert last.messages[-1]["role"] == "user"
    assert "are you still there?" in str(last.messages[-1]["content"])
