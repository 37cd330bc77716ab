"""Print mode's machine-readable stdout: `--output-format json` (one result object at the end) and
`stream-json` (one JSON object per line as things happen, the same result object last).

The field names follow Claude Code's where it has the same thing (`type`, `subtype`, `result`,
`is_error`, `num_turns`, `total_cost_usd`, `permission_denials`, `system`/`init`, `api_retry`); the
schema, a smaller one, is in README.md. Strings carry the real text (never made visible, which
would change it), and every character a terminal could act on is written as a JSON escape
(`\\u001b`, `\\u009b`, `\\u202e`), so printing a line raw is as safe as printing text made visible.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any, TextIO

from mini_claude.app.session import Session
from mini_claude.core.events import (
    Event,
    MemoriesRecalled,
    MessageAdded,
    Notice,
    RequestStarted,
    Retrying,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    UsageReport,
)
from mini_claude.core.untrusted import must_write_out, shown_as_is
from mini_claude.llm.pricing import estimate_cost

SUBTYPES = {
    "done": "success",
    "max_tokens": "error_max_tokens",
    "refused": "error_refusal",
    "spend_cap": "error_max_budget_usd",  # the subtype Claude Code gives a run stopped by its budget
    "turn_cap": "error_max_turns",
    "error": "error_during_execution",
    "interrupted": "error_interrupted",
    "stopped": "error_stopped_by_hook",
    "refused_by_user": "success",  # a user's no at a question: only in the REPL, listed for completeness
}
INTERRUPTED_ERROR = "interrupted (Ctrl+C or SIGINT)"


def json_line(value: Any) -> str:
    """`value` as one line of JSON whose text holds no character a terminal acts on or hides."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    if shown_as_is(text):
        return text
    # What text mode writes out (untrusted's one definition) is a \u escape here.
    return "".join(_escaped(char) if must_write_out(char) else char for char in text)


def _escaped(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def usage_json(usage: UsageReport) -> dict[str, int]:
    """Token counts under the API's own names."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


class JsonOutput:
    """An event sink that writes stdout for `json` (only the result) or `stream-json` (each event).
    Events may come from two threads (the agent's, memory start-up's warnings): lines never mix."""

    def __init__(self, *, stream: bool, out: TextIO | None = None) -> None:
        self.stream = stream
        self._out = out or sys.stdout
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._turns = 0
        self._tool_inputs: dict[str, Any] = {}
        self._denials: list[dict[str, Any]] = []

    def start(self, session: Session) -> None:
        """stream-json's first line: what this run works with."""
        if not self.stream:
            return
        s = session.settings
        tools = [tool["name"] for tool in session.agent.tools.definitions()]
        self._emit(
            {"type": "system", "subtype": "init", "session_id": session.transcript.session_id,
             "model": s.model, "cwd": str(s.project_dir), "permission_mode": s.permission_mode,
             "tools": tools}
        )  # fmt: skip

    def __call__(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, RequestStarted):
                self._turns += 1
            elif isinstance(event, MessageAdded) and event.kind == "assistant":
                calls = [block for block in event.content if block.get("type") == "tool_use"]
                self._tool_inputs.update((call["id"], call.get("input")) for call in calls)
            elif isinstance(event, ToolFinished) and event.denied:
                self._denials.append(
                    {"tool_name": event.name, "tool_use_id": event.tool_use_id,
                     "tool_input": self._tool_inputs.get(event.tool_use_id)}
                )  # fmt: skip
            line = self._stream_line(event) if self.stream else None
        if line is not None:
            self._emit(line)

    def _stream_line(self, event: Event) -> dict[str, Any] | None:
        match event:
            case TextDelta(text=text) if text:
                return {"type": "text_delta", "text": text}
            case MessageAdded(kind="assistant", content=content):
                return {"type": "assistant", "message": {"role": "assistant", "content": list(content)}}
            case ToolStarted(tool_use_id=tool_id, name=name, summary=summary):
                return {"type": "tool_start", "tool_use_id": tool_id, "name": name, "summary": summary,
                        "input": self._tool_inputs.get(tool_id)}  # fmt: skip
            case ToolFinished():
                return {"type": "tool_end", "tool_use_id": event.tool_use_id, "name": event.name,
                        "summary": event.summary, "is_error": event.is_error,
                        "denied": event.denied}  # fmt: skip
            case UsageReport():
                return {"type": "usage", **usage_json(event)}
            case Notice(text=text, level=level):
                return {"type": "system", "subtype": "notice", "level": level, "text": text}
            case MemoriesRecalled(file_names=names):
                return {"type": "system", "subtype": "memories_recalled", "files": list(names)}
            case Retrying():
                return {"type": "system", "subtype": "api_retry", "attempt": event.attempt,
                        "max_retries": event.max_retries, "retry_delay_ms": round(event.delay_s * 1000),
                        "error": event.reason}  # fmt: skip
        return None

    def finish(self, session: Session, ended: TurnEnded, exit_code: int) -> None:
        """The result object: the last line of stream-json, the only one of json."""
        llm, s = session.llm, session.settings
        with self._lock:
            error = None
            if ended.reason == "interrupted":
                error = INTERRUPTED_ERROR
            elif ended.reason not in ("done", "refused_by_user"):
                error = ended.problem
            costs = [estimate_cost(s.model, llm.usage_total)]
            if llm.side_queries:
                costs.append(estimate_cost(s.side_model, llm.side_usage_total))
            result = {
                "type": "result",
                "subtype": SUBTYPES[ended.reason],
                "is_error": ended.reason not in ("done", "refused_by_user"),
                "exit_reason": ended.reason,
                "exit_code": exit_code,
                "result": ended.final_text,
                "error": error,
                "session_id": session.transcript.session_id,
                "model": s.model,
                "num_turns": self._turns,
                "duration_ms": round((time.monotonic() - self._started) * 1000),
                "usage": usage_json(llm.usage_total),
                "recall": {"side_queries": llm.side_queries, "usage": usage_json(llm.side_usage_total)},
                "total_cost_usd": None if None in costs else round(sum(c or 0.0 for c in costs), 6),
                "permission_denials": list(self._denials),
            }
        self._emit(result)

    def _emit(self, value: dict[str, Any]) -> None:
        with self._lock:
            self._out.write(json_line(value) + "\n")
            self._out.flush()
