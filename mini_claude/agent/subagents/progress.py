"""A sub-agent's events, as its session sees them: one live line while it runs (its task, the
tools it used, its tokens), and the content it adds to its own conversation (print mode's
stream-json shows it under its parent call)."""

from __future__ import annotations

from mini_claude.core.events import (
    Event,
    EventSink,
    MessageAdded,
    SubagentMessage,
    SubagentProgress,
    ToolFinished,
    UsageReport,
)


class Progress:
    """An EventSink for a sub-agent's Agent; `tell` hears what the session should."""

    def __init__(self, call_id: str, agent: str, task: str, tell: EventSink, model: str = "") -> None:
        self.call_id, self.agent, self.task, self.tell, self.model = call_id, agent, task, tell, model
        self.tools_used = 0
        self.tokens = 0
        self.tell(self._line())

    def __call__(self, event: Event) -> None:
        if isinstance(event, ToolFinished):
            self.tools_used += 1
        elif isinstance(event, UsageReport):
            self.tokens += event.input_tokens + event.output_tokens
        elif isinstance(event, MessageAdded):
            self.tell(SubagentMessage(self.call_id, event, self.model))
            return
        else:
            return
        self.tell(self._line())

    def finish(self, reason: str) -> None:
        self.tell(self._line(finished=reason))

    def _line(self, finished: str | None = None) -> SubagentProgress:
        return SubagentProgress(self.call_id, self.agent, self.task, self.tools_used, self.tokens, finished)
