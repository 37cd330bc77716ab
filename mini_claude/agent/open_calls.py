"""The tool calls of the stored reply that have no answer yet: running them, and answering them all.

Apart from agent/loop.py because the agent's invariant rests on this bookkeeping: whatever ends a step,
every open call gets exactly one tool_result, and a call the user saw start gets its line closed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mini_claude.core import prompts
from mini_claude.core.events import EventSink, ToolFinished, ToolOutput, ToolStarted
from mini_claude.core.hook_points import NoHooks, TurnHooks
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.registry import ToolRegistry

INTERRUPTED_SUMMARY = "interrupted"  # the result line of a tool call that Ctrl+C stopped
HOOK_BLOCKED_SUMMARY = "blocked by a hook"


class OpenToolCalls:
    """The calls of the stored reply without an answer yet, their results so far, the call on screen."""

    def __init__(
        self, tools: ToolRegistry, tool_context: ToolContext, sink: EventSink, hooks: TurnHooks | None = None
    ) -> None:
        self.tools = tools
        self.tool_context = tool_context
        self.sink = sink
        self.hooks: TurnHooks = hooks or NoHooks()
        self.stopped: str | None = None  # a hook's `continue: false` during the last call: why
        self.calls: list[dict[str, Any]] = []
        self._results: dict[str, ToolResult] = {}
        self._running: dict[str, Any] | None = None

    def open(self, content: list[dict[str, Any]]) -> None:
        """The tool calls in a stored reply's content are now waiting for their answers."""
        self.calls = [block for block in content if block["type"] == "tool_use"]
        self.stopped = None

    def run(self, call: dict[str, Any], refused: str | None) -> ToolResult:
        """Run one call (or answer `refused`, a notice key, without running it); its line is
        opened on screen first, and closed once its result is recorded."""
        name, tool_input = call["name"], call["input"]
        self.sink(ToolStarted(call["id"], name, self.tools.summarize_call(name, tool_input)))
        self._running = call
        if refused is not None:
            result = ToolResult(prompts.notice(refused), "not run", is_error=True)
        else:
            self.tool_context.output = lambda text: self.sink(ToolOutput(call["id"], text))
            try:
                result = self._run_hooked(call)
            finally:
                self.tool_context.output = None
        self._results[call["id"]] = result
        self._finish_line(call, result)
        return result

    def _run_hooked(self, call: dict[str, Any]) -> ToolResult:
        """The call, with the hooks before it (which may block it) and after it (which may add
        what the model reads with its result, or stop the turn)."""
        call_id, name = call["id"], call["name"]
        tool_input = call["input"] if isinstance(call["input"], dict) else {}
        before = self.hooks.before_tool(call_id, name, tool_input)
        try:
            if before.block is not None:
                result = ToolResult(before.block, HOOK_BLOCKED_SUMMARY, is_error=True)
            else:
                result = self.tools.run(name, call["input"], self.tool_context)
        except BaseException:  # Ctrl+C: the hooks' state of this call ends with it
            self.hooks.after_tool(call_id, name, tool_input, None)
            raise
        response = None if before.block is not None else _response(result)
        after = self.hooks.after_tool(call_id, name, tool_input, response)
        self.stopped = before.stop or after.stop
        added = "\n\n".join((*before.context, *after.context))
        if not added:
            return result
        if isinstance(result.content, str):
            return replace(result, content=f"{result.content}\n\n{added}")
        return replace(result, content=[*result.content, {"type": "text", "text": added}])

    def answer_all(self, unanswered: str) -> list[dict[str, Any]]:
        """One tool_result for every open call (calls without a result get the `unanswered`
        notice), after closing the line of the call shown running; none are open afterwards."""
        if self._running is not None:
            # The user saw the call start: its line must stay, saying it was stopped.
            stopped = ToolResult(prompts.notice("interrupted"), INTERRUPTED_SUMMARY, is_error=True)
            self._finish_line(self._running, self._results.setdefault(self._running["id"], stopped))
        calls, results, self.calls, self._results = self.calls, self._results, [], {}
        if not calls:
            return []
        missing = ToolResult(prompts.notice(unanswered), "not run", is_error=True)
        return [_tool_result(call, results.get(call["id"], missing)) for call in calls]

    def _finish_line(self, call: dict[str, Any], result: ToolResult) -> None:
        self.sink(
            ToolFinished(
                call["id"], call["name"], result.summary, result.is_error, result.denied, result.detail
            )
        )
        self._running = None


def _response(result: ToolResult) -> dict[str, Any]:
    """A result as a PostToolUse hook reads it (`tool_response`)."""
    return {"output": result.content, "summary": result.summary, "is_error": result.is_error}


def _tool_result(call: dict[str, Any], result: ToolResult) -> dict[str, Any]:
    answer: dict[str, Any] = {"type": "tool_result", "tool_use_id": call["id"], "content": result.content}
    if result.is_error:
        answer["is_error"] = True
    return answer
