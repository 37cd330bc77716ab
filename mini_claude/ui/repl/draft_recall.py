"""Recall while the user types: when the draft in the prompt has paused for DRAFT_PAUSE_SECONDS,
it is handed to the session's recall (which decides whether it is worth a side query), so the
memories can be ready for the message's first request instead of arriving a round late."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer

    from mini_claude.memory.recall.memory_recall import MemoryRecall

DRAFT_PAUSE_SECONDS = 0.5


class DraftRecall:
    def __init__(self, recall: MemoryRecall, pause: float = DRAFT_PAUSE_SECONDS) -> None:
        self.recall = recall
        self.pause = pause
        self._timer: asyncio.TimerHandle | None = None

    def attach(self, buffer: Buffer) -> None:
        buffer.on_text_changed += self._typed

    def _typed(self, buffer: Buffer) -> None:
        if self._timer is not None:
            self._timer.cancel()
        try:
            loop = asyncio.get_running_loop()  # the prompt's own: text changes come from its keys
        except RuntimeError:
            return
        self._timer = loop.call_later(self.pause, self._paused, buffer)

    def _paused(self, buffer: Buffer) -> None:
        self._timer = None
        self.recall.start_draft(buffer.text)
