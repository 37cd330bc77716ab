"""What many tests share, read off the fake server's recorded requests: which calls were the
agent's and which were recall's side queries, what the model was shown (system prompt, user
texts, recalled reminders), and scripted side-model answers."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mini_claude.memory.store import MemoryStore
from tests.fake_api import FakeAnthropic, RecordedRequest, Reply, text_reply


def main_calls(fake: FakeAnthropic) -> list[RecordedRequest]:
    """The agent's own (streamed) requests, without the memory-recall side queries."""
    return [r for r in fake.requests if r.stream]


def side_queries(fake: FakeAnthropic) -> list[RecordedRequest]:
    return [r for r in fake.requests if not r.stream]


def system_text(request: RecordedRequest) -> str:
    system = request.system
    return system if isinstance(system, str) else "".join(block["text"] for block in system or [])


def block_text(block: dict[str, Any]) -> str:
    """A text block's text, or a tool_result's content as text."""
    if block.get("type") == "tool_result":
        content = block["content"]
        return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
    return block.get("text", "")


def user_texts(request: RecordedRequest) -> list[str]:
    """Every text the request carries in user messages (plain text blocks and tool results)."""
    return [
        block_text(block)
        for message in request.messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") in ("text", "tool_result")
    ]


def reminders_in(request: RecordedRequest) -> list[str]:
    """The `<system-reminder>` blocks (recalled memories) anywhere in the request's conversation."""
    return [text for text in user_texts(request) if text.startswith("<system-reminder>")]


def side_query_message(request: RecordedRequest) -> str:
    """The user message a recall side query sent: the query and the manifest."""
    content = request.messages[0]["content"]
    return content if isinstance(content, str) else "".join(block_text(b) for b in content)


def choose(*file_names: str, **kw: Any) -> Reply:
    """The side model's answer selecting these memories."""
    names = ", ".join(f'"{name}"' for name in file_names)
    return text_reply(f'{{"selected_memories": [{names}]}}', **kw)


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


def wait_for_log_line(path: Path, text: str, timeout: float = 15) -> None:
    """`text` appears in the debug log at `path` (a program in another process said it is done)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never appeared in {path}")
