"""The typed events the agent emits; front ends render them, tests collect them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class RequestStarted:
    """A model call was sent; nothing has streamed back yet (the UI shows a spinner)."""


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class TextDone:
    """The current text block is complete (or was cut short by an interruption or error)."""


@dataclass(frozen=True)
class ToolPreparing:
    """The model began writing a tool call; its input is still streaming (can take a while)."""

    name: str


@dataclass(frozen=True)
class ToolStarted:
    tool_use_id: str
    name: str
    summary: str  # the main argument, e.g. the file path or the command


@dataclass(frozen=True)
class ToolFinished:
    tool_use_id: str
    name: str
    summary: str  # a short result for the user, e.g. "42 lines"; for an error, the reason (one line)
    is_error: bool


@dataclass(frozen=True)
class UsageReport:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: UsageReport) -> UsageReport:
        return UsageReport(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True)
class Notice:
    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass(frozen=True)
class MemoriesRecalled:
    file_names: tuple[str, ...]


@dataclass(frozen=True)
class TurnEnded:
    reason: Literal["done", "interrupted", "error", "turn_cap", "max_tokens"]
    final_text: str  # the text of the turn's last assistant message


Event = (
    RequestStarted
    | TextDelta
    | TextDone
    | ToolPreparing
    | ToolStarted
    | ToolFinished
    | UsageReport
    | Notice
    | MemoriesRecalled
    | TurnEnded
)
EventSink = Callable[[Event], None]
