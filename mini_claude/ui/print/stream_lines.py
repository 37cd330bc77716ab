"""`--output-format stream-json`'s lines in Claude Code's shapes, so a script written for
`claude -p --output-format stream-json --verbose` reads ours unchanged: a `system` `init` line,
then an `assistant` line per reply (an API message object: text and tool_use blocks, with its
usage) and a `user` line per set of tool results (tool_result blocks), `system` lines for what
else happens (notices, retries, compaction), and the `result` line last (`json_output.py`). A
sub-agent's messages (its task, replies, tool results) carry its `agent` call's id in
`parent_tool_use_id`.
With `--include-partial-messages`, `stream_event` lines carry the reply's text as it streams.
Every line has `session_id` and `uuid`; fields of our own (`permission_mode`) may stay beside
Claude Code's."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from mini_claude.core.config import PERMISSION_MODE_ALIASES
from mini_claude.core.events import (
    ContextCompacted,
    Event,
    MemoriesRecalled,
    MessageAdded,
    Notice,
    RequestStarted,
    Retrying,
    SubagentMessage,
    TextDelta,
    TextDone,
    ToolPreparing,
    UsageReport,
)

# Our permission modes under Claude Code's names (`permissionMode` in the init line).
# Claude Code's names for our modes (plan is called the same).
CLAUDE_CODE_MODES = {ours: theirs for theirs, ours in PERMISSION_MODE_ALIASES.items()}
# A server's state as Claude Code's init line says it.
MCP_STATUSES = {"connected": "connected", "connecting": "pending", "failed": "failed", "stopped": "failed"}
COMPACT_TRIGGERS = {"manual": "manual", "auto": "auto", "too_long": "auto"}

Line = dict[str, Any]


def usage_json(usage: UsageReport) -> dict[str, int]:
    """Token counts under the API's own names."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


class StreamLines:
    """Events in, Claude Code's lines out. A reply's `assistant` line waits for its usage (which the
    agent reports after storing the reply), so the message object carries it as Claude Code's does."""

    def __init__(self, session_id: Callable[[], str], model: Callable[[], str], *, partial: bool) -> None:
        self._session_id = session_id
        self._model = model
        self._partial = partial
        self._waiting: Line | None = None  # the last reply's line, until its usage comes
        self._block = -1  # the index of the content block streaming now (stream_event lines)
        self._in_text = False

    def init(
        self,
        *,
        cwd: str,
        tools: list[str],
        mcp_servers: list[Line],
        permission_mode: str,
        api_key_source: str,
    ) -> Line:
        modes = CLAUDE_CODE_MODES
        return self._line(
            {"type": "system", "subtype": "init", "cwd": cwd, "tools": tools, "mcp_servers": mcp_servers,
             "model": self._model(), "permissionMode": modes.get(permission_mode, permission_mode),
             "permission_mode": permission_mode, "apiKeySource": api_key_source, "slash_commands": [],
             "output_style": "default"}
        )  # fmt: skip

    def lines(self, event: Event) -> list[Line]:
        """The lines `event` makes (with any reply line it releases, first)."""
        if isinstance(event, UsageReport) and self._waiting is not None:
            self._waiting["message"]["usage"] = usage_json(event)
            return self.flush()
        if isinstance(event, TextDelta | TextDone | ToolPreparing | RequestStarted):
            return self._partial_line(event)
        line = self._line_for(event)
        if line is None:
            return []
        if isinstance(event, MessageAdded) and event.kind == "assistant":
            released, self._waiting = self.flush(), line
            return released
        return [*self.flush(), line]

    def flush(self) -> list[Line]:
        """The reply line still waiting for its usage (a refused or interrupted reply has none)."""
        waiting, self._waiting = self._waiting, None
        return [waiting] if waiting is not None else []

    def _line_for(self, event: Event) -> Line | None:
        match event:
            case MessageAdded(kind="assistant", content=content):
                return self._reply(content, None, self._model())
            case MessageAdded(kind="tool_results", content=content):
                message = {"role": "user", "content": list(content)}
                return self._line({"type": "user", "parent_tool_use_id": None, "message": message})
            case SubagentMessage(parent_tool_use_id=parent, message=MessageAdded(kind=kind, content=content)):
                if kind == "assistant":
                    return self._reply(content, parent, event.model)
                message = {"role": "user", "content": list(content)}  # its task, its tools' results
                return self._line({"type": "user", "parent_tool_use_id": parent, "message": message})
            case ContextCompacted(before_tokens=before, trigger=trigger):
                metadata = {"trigger": COMPACT_TRIGGERS[trigger], "pre_tokens": before}
                return self._line(
                    {"type": "system", "subtype": "compact_boundary", "compact_metadata": metadata}
                )
            case Notice(text=text, level=level):
                return self._line({"type": "system", "subtype": "notice", "level": level, "text": text})
            case MemoriesRecalled(file_names=names):
                return self._line({"type": "system", "subtype": "memories_recalled", "files": list(names)})
            case Retrying():
                return self._line(
                    {"type": "system", "subtype": "api_retry", "attempt": event.attempt,
                     "max_retries": event.max_retries, "retry_delay_ms": round(event.delay_s * 1000),
                     "error": event.reason}
                )  # fmt: skip
        return None

    def _reply(self, content: Any, parent: str | None, model: str) -> Line:
        return self._line(
            {"type": "assistant", "parent_tool_use_id": parent,
             "message": {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
                         "model": model, "content": list(content), "stop_reason": None,
                         "stop_sequence": None, "usage": None}}
        )  # fmt: skip

    def _partial_line(self, event: Event) -> list[Line]:
        """`stream_event` lines: the reply's text deltas, indexed by content block as the API's are."""
        if isinstance(event, RequestStarted):
            self._block, self._in_text = -1, False
        elif isinstance(event, ToolPreparing):
            self._block, self._in_text = self._block + 1, False
        elif isinstance(event, TextDone):
            self._in_text = False
        elif isinstance(event, TextDelta) and event.text and self._partial:
            if not self._in_text:
                self._block, self._in_text = self._block + 1, True
            delta = {"type": "content_block_delta", "index": self._block,
                     "delta": {"type": "text_delta", "text": event.text}}  # fmt: skip
            return [self._line({"type": "stream_event", "parent_tool_use_id": None, "event": delta})]
        return []

    def _line(self, fields: Line) -> Line:
        return {**fields, "session_id": self._session_id(), "uuid": str(uuid.uuid4())}
