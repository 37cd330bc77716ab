"""The stored conversation: its messages, whose roles alternate (content of the role of the last
message joins it), each change saved to the transcript before anyone is told of it.

Apart from agent/loop.py so the loop reads as the turn it runs, and what a conversation must stay
(alternating roles, unique tool_use ids, only text UTF-8 can carry) is kept in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mini_claude.core.events import ContextCompacted, Event, EventSink, MessageAdded, MessageKind
from mini_claude.core.untrusted import encodable_value

Message = dict[str, Any]


class Conversation:
    def __init__(self, save: EventSink, sink: EventSink) -> None:
        """`save` (the transcript) hears each change to the conversation before `sink` does."""
        self.save = save
        self.sink = sink
        self.messages: list[Message] = []

    def add(self, kind: MessageKind, blocks: list[dict[str, Any]], files: tuple[str, ...] = ()) -> None:
        """Add content, merged into a trailing message of the same role so roles keep alternating
        (user content; a paused reply's continuation), then save and tell it."""
        role = "assistant" if kind == "assistant" else "user"
        blocks = encodable_value(blocks)  # nothing UTF-8 cannot carry enters the conversation
        if self.messages and self.messages[-1]["role"] == role:
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": role, "content": list(blocks)})
        self.tell(MessageAdded(kind, tuple(blocks), files))

    def tell(self, event: Event) -> None:
        """Tell the sink of `event`; a change to the conversation is saved first, so a Ctrl+C that
        cuts the UI's handling short cannot lose it from the transcript."""
        if isinstance(event, MessageAdded | ContextCompacted):
            self.save(event)
        self.sink(event)

    def tool_use_ids(self) -> set[str]:
        """Every tool_use id in it: the API refuses a conversation that repeats one."""
        replies = (message["content"] for message in self.messages if message["role"] == "assistant")
        return {block["id"] for content in replies for block in content if block.get("type") == "tool_use"}


def has_tool_results(message: Message) -> bool:
    return message["role"] == "user" and any(b.get("type") == "tool_result" for b in message["content"])


def is_turn_start(message: Message) -> bool:
    """A user message that answers no tool call: what the user typed (with reminders or notices)."""
    return message["role"] == "user" and not has_tool_results(message)


def text_blocks(texts: Iterable[str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text} for text in texts]
