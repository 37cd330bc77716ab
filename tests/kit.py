"""What many tests share, read off the fake server's recorded requests: which calls were the
agent's and which were recall's side queries, what the model was shown (system prompt, user
texts, tool results, recalled reminders), scripted side-model answers; and waits that end on an
event or fail instead of hanging the suite."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from mini_claude.memory.store.memory_store import MemoryStore
from tests.fake_api import FakeAnthropic, RecordedRequest, Reply, text_reply


def main_calls(fake: FakeAnthropic) -> list[RecordedRequest]:
    """The agent's own (streamed) requests, without the memory-recall side queries."""
    return [r for r in fake.requests if r.stream]


def side_queries(fake: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake.requests if not r.stream]


def system_text(request: RecordedRequest) -> str:
    system = request.system
    return system if isinstance(system, str) else "".join(block["text"] for block in system or [])


def prompt_index_lines(system: str, scope: str = "project") -> list[str]:
    """The lines of one scope's memory index in a system prompt (`<memory-index folder=…>`, after
    the scope's title); [] when that scope shows none."""
    titles = {"project": "This project's memories:", "team": "Team memories", "user": "Your memories"}
    if titles[scope] not in system:
        return []
    after = system.split(titles[scope], 1)[1].split("<memory-index", 1)[1].split(">\n", 1)[1]
    return after.split("\n</memory-index>", 1)[0].splitlines()


def result_text(block: dict[str, Any]) -> str:
    """A tool_result block's content as text."""
    content = block["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def block_text(block: dict[str, Any]) -> str:
    """A text block's text, or a tool_result's content as text."""
    return result_text(block) if block.get("type") == "tool_result" else block.get("text", "")


def tool_results_in(request: RecordedRequest) -> list[dict[str, Any]]:
    """The tool_result blocks of the request's last user message."""
    last = request.messages[-1]
    return [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def last_result_in_conversation(messages: list[dict[str, Any]]) -> str:
    """The text of the conversation's last tool result (a no at a question ends the turn before
    the model is told, so it is in no request yet)."""
    results = [block for message in messages if message["role"] == "user"
               for block in message["content"] if block.get("type") == "tool_result"]  # fmt: skip
    return result_text(results[-1])


def message_texts(message: dict[str, Any]) -> list[str]:
    """A message's text blocks and tool results as texts (string content is one text)."""
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [block_text(block) for block in content if block.get("type") in ("text", "tool_result")]


def user_texts(request: RecordedRequest) -> list[str]:
    """Every text the request carries in user messages (plain text blocks and tool results)."""
    return [
        text
        for message in request.messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for text in message_texts(message)
    ]


def reminders_in(request: RecordedRequest) -> list[str]:
    """The `<system-reminder>` texts (recalled memories) anywhere in the request's conversation:
    any message, any role, a text block or a tool result, so a reminder in the wrong place counts."""
    return [
        text
        for message in request.messages
        for text in message_texts(message)
        if text.startswith("<system-reminder>")
    ]


def side_query_message(request: RecordedRequest) -> str:
    """The user message a recall side query sent: the query and the manifest."""
    return "".join(message_texts(request.messages[0]))


def choose(*file_names: str, **kw: Any) -> Reply:
    """The side model's answer selecting these memories."""
    names = ", ".join(f'"{name}"' for name in file_names)
    return text_reply(f'{{"selected_memories": [{names}]}}', **kw)


# A streamed reply that shows "tick tick tick" (three pieces), then waits until the test sets its
# `release`: keys typed meanwhile are typed during the reply however slow the machine is (after
# Terminal.type_and_wait_until_read). Released or not, it ends when the fake closes.
HELD = {"chunk_size": 5, "hold_after_deltas": 3}


def held_reply(text: str, **kw: Any) -> Reply:
    return text_reply(text, **HELD, **kw)


def memory_text(
    name: str = "a fact",
    description: str = "what it is for",
    memory_type: str = "project",
    body: str = "Body.\n",
) -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {memory_type}\n---\n{body}"


def seed_memories(memory_dir: Path, files: dict[str, str]) -> MemoryStore:
    """The files in the memory folder, indexed."""
    memory_dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (memory_dir / name).write_text(text)
    store = MemoryStore(memory_dir)
    store.rebuild_index()
    return store


def wait_until(condition: Callable[[], bool], timeout: float = 15, poll: float = 0.02) -> bool:
    """Whether `condition()` came true within `timeout` seconds (what another process or thread
    does, seen from outside: a file, a log line, a lock it waits for)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(poll)
    return True


def wait_for_log_line(path: Path, text: str, timeout: float = 15) -> None:
    """`text` appears in the debug log at `path` (a program in another process said it is done)."""
    if not wait_until(lambda: path.exists() and text in path.read_text(errors="replace"), timeout, 0.05):
        raise AssertionError(f"{text!r} never appeared in {path}")


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


def wait_for_file(path: Path, timeout: float = 15) -> None:
    """`path` exists (a program in another process made it, such as a command's "started" marker)."""
    assert wait_until(path.exists, timeout), f"{path} never appeared"


def mode(path: Path) -> int:
    """The permission bits of what `path` leads to."""
    return stat.S_IMODE(os.stat(path).st_mode)


def empty_files(folder: Path, names: Iterable[str]) -> None:
    """Empty files of these names in `folder` (which exists), as `touch` makes them, at a third
    of the cost of `Path.touch` each: the tests of scan budgets make tens of thousands."""
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o666, dir_fd=folder_fd))
    finally:
        os.close(folder_fd)
