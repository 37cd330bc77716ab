"""Thinking blocks in requests: sent back exactly as the model wrote them, except those the request
view has made stale.

Newer models check each thinking block sent back against its prefix, everything the request held
before it when it was written ("preserved thinking"): once that changed (a compaction summary now
stands for older messages, old tool output was cleared), the block and every later one are
invalid, and the API refuses the request or drops them. So each reply's prefix is remembered as a
hash of the messages its request held, and a later request leaves out the thinking of a message
whose prefix no longer matches, as the API documents for a conversation summarised or trimmed.
The current turn's thinking always goes back (the API requires it with tool results); thinking
of earlier turns never has to. A conversation resumed from its transcript has no hashes: its
thinking is sent as stored.
"""

from __future__ import annotations

import hashlib
import json

from mini_claude.agent.conversation import Message, is_turn_start
from mini_claude.llm.streamed_response import THINKING_TYPES


def has_thinking(message: Message) -> bool:
    return message["role"] == "assistant" and any(b.get("type") in THINKING_TYPES for b in message["content"])


def without_thinking(message: Message) -> Message:
    """`message` without its thinking blocks (as it is, were they all it held)."""
    kept = [block for block in message["content"] if block.get("type") not in THINKING_TYPES]
    return {**message, "content": kept} if kept else message


class ThinkingPrefixes:
    """The prefix hash of each stored reply's request, by the reply's index in the stored messages."""

    def __init__(self) -> None:
        self._prefixes: dict[int, str] = {}

    def reset(self) -> None:
        self._prefixes.clear()

    def checked(self, view: list[Message], first_stored: int, stored_count: int) -> list[Message]:
        """`view` (what a request holds; `view[k]` stands for stored message `first_stored + k`,
        the first one may hold a summary too) without the stale thinking of earlier turns. Its hash
        is remembered as the prefix of the reply it asks for (stored message `stored_count`)."""
        current_turn = max((k for k, message in enumerate(view) if is_turn_start(message)), default=0)
        digest = hashlib.sha256()
        sent = []
        for k, message in enumerate(view):
            known = self._prefixes.get(first_stored + k)
            if k < current_turn and has_thinking(message) and known not in (None, digest.hexdigest()):
                message = without_thinking(message)
            sent.append(message)
            digest.update(json.dumps(message, sort_keys=True, separators=(",", ":")).encode())
        self._prefixes[stored_count] = digest.hexdigest()
        return sent
