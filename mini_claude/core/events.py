"""The typed events the agent emits; front ends render them, tests collect them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal


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
class ThinkingBlock:
    """A block of the model's thinking is complete: its text (empty when the server sends the
    thinking encrypted only: `redacted`, or a model that omits it)."""

    text: str
    redacted: bool = False


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
    denied: bool = False  # refused by the permission rules (or by the user at their question)
    # lines shown under the tool line (a command's output collapsed, a diff, a memory saved: what, where)
    detail: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolOutput:
    """Output a running tool printed just now (a command's), shown live under its line."""

    tool_use_id: str
    text: str


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
class Retrying:
    """The model call failed in a way worth retrying (429, 5xx, a failed connection): it is tried
    again after `delay_s` (the UI says so rather than seem stuck)."""

    attempt: int  # the retry about to be made: 1 for the first
    max_retries: int
    delay_s: float
    reason: str  # one line: "API error 529 (overloaded)", "connection failed (ConnectError)"


@dataclass(frozen=True)
class Notice:
    text: str
    level: Literal["info", "warning", "error"] = "info"


MessageKind = Literal["user", "assistant", "tool_results", "notice", "memories", "instructions"]


@dataclass(frozen=True)
class MessageAdded:
    """Content added to the conversation, as API blocks (a transcript saves it). User content of
    every kind but "assistant" goes into a trailing user message, so roles keep alternating."""

    kind: MessageKind
    content: tuple[dict[str, Any], ...]
    memory_files: tuple[str, ...] = ()  # for "memories": the files the reminders came from


@dataclass(frozen=True)
class MemoriesRecalled:
    file_names: tuple[str, ...]


# "refused": the model declined (stop reason refusal); "refused_by_user": the user said no at a
# question; "stopped": a hook stopped it (a prompt blocked, `continue: false`); "spend_cap": the
# next call could pass, or the last one passed, the --max-cost cap.
TurnEndReason = Literal[
    "done",
    "interrupted",
    "error",
    "turn_cap",
    "max_tokens",
    "refused",
    "refused_by_user",
    "stopped",
    "spend_cap",
]
# A tool call that ends its turn: the user said no at its question, or a plan was printed where no
# one can answer it (print mode).
ToolEnding = Literal["refused_by_user", "plan_printed"]
CompactionTrigger = Literal["manual", "auto", "too_long"]  # /compact, the window filling up, a 400


@dataclass(frozen=True)
class CompactionStarted:
    """The model is summarising the conversation (the UI shows "Compacting…")."""

    trigger: CompactionTrigger


@dataclass(frozen=True)
class ContextCompacted:
    """From now on requests hold `summary` instead of the first `replaced` stored messages (which
    stay stored, like the transcript's copy: a transcript saves this as a compaction record)."""

    before_tokens: int  # the request's size before (the server's count, or our estimate)
    after_tokens: int  # estimated
    summary: tuple[dict[str, Any], ...]  # text blocks, the model's words
    replaced: int
    focus: str | None
    trigger: CompactionTrigger


@dataclass(frozen=True)
class ContextStatus:
    """How full the context window is after a reply: what the next request will start from."""

    used_tokens: int
    window: int


@dataclass(frozen=True)
class SubagentProgress:
    """A sub-agent started by the `agent` call `tool_use_id` runs (the screen keeps a live line
    for each running one), or, `finished` set, ended ("done", "interrupted", "error"…)."""

    tool_use_id: str
    agent: str  # its type's name
    task: str  # the call's short description
    tools_used: int = 0
    tokens: int = 0  # input and output, all its calls so far
    finished: str | None = None


@dataclass(frozen=True)
class SubagentMessage:
    """Content a sub-agent added to its own conversation (print mode's stream-json shows it with
    `parent_tool_use_id`)."""

    parent_tool_use_id: str
    message: MessageAdded
    model: str = ""  # the sub-agent's


@dataclass(frozen=True)
class TurnEnded:
    reason: TurnEndReason
    final_text: str  # the text of the turn's last assistant message
    problem: str | None = None  # why it ended early, as the notice before it told the user


Event = (
    RequestStarted
    | TextDelta
    | TextDone
    | ThinkingBlock
    | ToolPreparing
    | ToolStarted
    | ToolFinished
    | ToolOutput
    | UsageReport
    | Retrying
    | Notice
    | MessageAdded
    | MemoriesRecalled
    | CompactionStarted
    | ContextCompacted
    | ContextStatus
    | SubagentProgress
    | SubagentMessage
    | TurnEnded
)
EventSink = Callable[[Event], None]


class WarningsOnce:
    """Tells `sink` each distinct warning once, as a Notice: start-up problems are found by several
    parts (the memory start-up, the system prompt's files), on any thread."""

    def __init__(self, sink: EventSink) -> None:
        self._sink = sink
        self._told: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, text: str) -> None:
        with self._lock:
            if text in self._told:
                return
            self._told.add(text)
        self._sink(Notice(text, "warning"))
