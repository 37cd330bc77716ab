"""Print mode's machine-readable stdout: `--output-format json` (one result object at the end) and
`stream-json` (one JSON object per line as things happen, in Claude Code's shapes: `stream_lines.py`;
the same result object last).

The result's fields are Claude Code's (`type`, `subtype`, `is_error`, `result`, `num_turns`,
`duration_ms`, `duration_api_ms`, `session_id`, `total_cost_usd`, `usage`, `permission_denials`),
with a few of our own after them; docs/usage.md lists them. Strings carry the real text (never
made visible, which would change it), and every character a terminal could act on is written as a JSON escape
(`\\u001b`, `\\u009b`, `\\u202e`), so printing a line raw is as safe as printing text made visible.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from typing import Any, TextIO

from mini_claude.app.session import Session
from mini_claude.core.events import Event, MessageAdded, RequestStarted, ToolFinished, TurnEnded, UsageReport
from mini_claude.core.untrusted import must_write_out, shown_as_is
from mini_claude.llm.pricing import estimate_cost
from mini_claude.ui.print.closed_stdout import discard_stdout, stop_main_thread
from mini_claude.ui.print.stream_lines import MCP_STATUSES, StreamLines, usage_json

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


class JsonOutput:
    """An event sink that writes stdout for `json` (only the result) or `stream-json` (a line per
    step, `stream_lines.py`). Events may come from two threads (the agent's, memory start-up's
    warnings): lines never mix. A stdout nobody reads any more ends the run (`closed_stdout.py`)."""

    def __init__(self, *, stream: bool, partial: bool = False, out: TextIO | None = None) -> None:
        self.stream = stream
        self.closed = False  # stdout was closed under us: nothing more is written
        self._session: Session | None = None  # known from start()
        self._out = out or sys.stdout
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._api_seconds = 0.0
        self._request_at: float | None = None
        self._turns = 0
        self._tool_inputs: dict[str, Any] = {}
        self._denials: list[dict[str, Any]] = []
        self._lines = StreamLines(self._session_id, self._model, partial=partial)
        self._early: list[Event] = []  # stream-json: what came before the init line, told after it

    def _session_id(self) -> str:
        return self._session.transcript.session_id if self._session is not None else ""

    def _model(self) -> str:
        return self._session.agent.model if self._session is not None else ""

    def start(self, session: Session) -> None:
        """The session is built and its MCP servers have connected (or failed): stream-json's first
        line says what this run works with; what was said before it follows it."""
        s = session.settings
        tools = [tool["name"] for tool in session.agent.tools.definitions()]
        servers = [
            {"name": view.name, "status": MCP_STATUSES[view.state]} for view in session.mcp.manager.views()
        ]
        key_source = "ANTHROPIC_API_KEY" if s.api_key else "ANTHROPIC_AUTH_TOKEN" if s.auth_token else "none"
        with self._lock:
            self._session = session
            if not self.stream:
                return
            init = self._lines.init(
                cwd=str(s.project_dir), tools=tools, mcp_servers=servers, permission_mode=s.permission_mode,
                api_key_source=key_source,
            )  # fmt: skip
            lines = [init, *(line for event in self._early for line in self._lines.lines(event))]
            self._early.clear()
        self._emit(lines)

    def __call__(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, RequestStarted):
                self._turns += 1
                self._request_at = time.monotonic()
            elif isinstance(event, UsageReport) and self._request_at is not None:
                self._api_seconds += time.monotonic() - self._request_at
                self._request_at = None
            elif isinstance(event, MessageAdded) and event.kind == "assistant":
                calls = [block for block in event.content if block.get("type") == "tool_use"]
                self._tool_inputs.update((call["id"], call.get("input")) for call in calls)
            elif isinstance(event, ToolFinished) and event.denied:
                self._denials.append(
                    {"tool_name": event.name, "tool_use_id": event.tool_use_id,
                     "tool_input": self._tool_inputs.get(event.tool_use_id)}
                )  # fmt: skip
            if self.stream and self._session is None:
                self._early.append(event)  # the init line comes first
                return
            lines = self._lines.lines(event) if self.stream else []
        if lines:
            self._emit(lines)

    def finish(self, session: Session, ended: TurnEnded, exit_code: int) -> None:
        """The result object: the last line of stream-json, the only one of json."""
        llm, s = session.llm, session.settings
        with self._lock:
            error = None
            if ended.reason == "interrupted":
                error = INTERRUPTED_ERROR
            elif ended.reason not in ("done", "refused_by_user"):
                error = ended.problem
            costs = [estimate_cost(session.agent.model, llm.usage_total)]
            if llm.side_queries:
                costs.append(estimate_cost(s.side_model, llm.side_usage_total))
            waiting = self._lines.flush() if self.stream else []
            result = {
                "type": "result",
                "subtype": SUBTYPES[ended.reason],
                "is_error": ended.reason not in ("done", "refused_by_user"),
                "duration_ms": round((time.monotonic() - self._started) * 1000),
                "duration_api_ms": round(self._api_seconds * 1000),
                "num_turns": self._turns,
                "result": ended.final_text,
                "session_id": self._session_id(),
                "total_cost_usd": None if None in costs else round(sum(c or 0.0 for c in costs), 6),
                "usage": usage_json(llm.usage_total),
                "permission_denials": list(self._denials),
                "uuid": str(uuid.uuid4()),
                "exit_reason": ended.reason,
                "exit_code": exit_code,
                "error": error,
                "model": session.agent.model,
                "recall": {"side_queries": llm.side_queries, "usage": usage_json(llm.side_usage_total)},
            }
        self._emit([*waiting, result], during_run=False)

    def _emit(self, lines: list[dict[str, Any]], *, during_run: bool = True) -> None:
        with self._lock:
            if self.closed:
                return
            try:
                self._out.write("".join(json_line(line) + "\n" for line in lines))
                self._out.flush()
            except BrokenPipeError:
                self.closed = True
            else:
                return
        discard_stdout()
        if during_run:
            stop_main_thread()  # nobody reads: the run ends as for Ctrl+C, what was said saved
