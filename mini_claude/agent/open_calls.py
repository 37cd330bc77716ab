"""The tool calls of the stored reply that have no answer yet: running them, and answering them all.

Apart from agent/loop.py because the agent's invariant rests on this bookkeeping: whatever ends a step,
every open call gets exactly one tool_result, and a call the user saw start gets its line closed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from mini_claude.agent.side_by_side import run_side_by_side
from mini_claude.core import prompts
from mini_claude.core.config import DEFAULT_MAX_TOOL_CALLS
from mini_claude.core.events import EventSink, Notice, ToolFinished, ToolOutput, ToolStarted
from mini_claude.core.hook_points import TurnHooks
from mini_claude.tools.base import RUNNING_CALL_ID, ToolContext, ToolResult
from mini_claude.tools.registry import ToolRegistry

INTERRUPTED_SUMMARY = "interrupted"  # the result line of a tool call that Ctrl+C stopped
HOOK_BLOCKED_SUMMARY = "blocked by a hook"
# Calls that hooks run for, one at a time across threads: a hook's permission decision holds for
# its call alone (extensions/approvals.py keeps one), and hooks see the calls in turn.
HOOKED_CALLS = threading.RLock()


class OpenToolCalls:
    """The calls of the stored reply without an answer yet, their results so far, the call on screen."""

    def __init__(
        self, tools: ToolRegistry, tool_context: ToolContext, sink: EventSink, hooks: TurnHooks
    ) -> None:
        self.tools = tools
        self.tool_context = tool_context
        self.sink = sink
        self.hooks = hooks
        self.stopped: str | None = None  # a hook's `continue: false` during the last call: why
        self.calls: list[dict[str, Any]] = []
        self.limit = DEFAULT_MAX_TOOL_CALLS  # calls of one reply that are run (maxToolCallsPerReply)
        self._results: dict[str, ToolResult] = {}
        self._running: dict[str, dict[str, Any]] = {}  # shown running, by id

    def open(self, content: list[dict[str, Any]]) -> None:
        """The tool calls in a stored reply's content are now waiting for their answers; those
        past the limit are answered at once, unrun (one line tells the user how many)."""
        self.calls = [block for block in content if block["type"] == "tool_use"]
        self.stopped = None
        if len(self.calls) > self.limit:
            over = len(self.calls) - self.limit
            unrun = ToolResult(prompts.notice("too_many_calls", limit=self.limit), "not run", is_error=True)
            self._results.update((call["id"], unrun) for call in self.calls[self.limit :])
            self.sink(Notice(prompts.notice("too_many_calls_user", count=over, limit=self.limit), "warning"))

    def run_all(self, refused: Mapping[str, str]) -> ToolResult | None:
        """Run the calls to run, in order: a stretch of calls that may run concurrently runs side
        by side; the others one at a time. Returns the result that ends the turn, if one does (the
        calls after it do not run), and stops once a hook stopped the turn."""
        to_run = self.calls[: self.limit]
        start = 0
        while start < len(to_run):
            end = start + 1
            while (
                end < len(to_run)
                and self._concurrent(to_run[start], refused)
                and self._concurrent(to_run[end], refused)
            ):
                end += 1
            stretch = to_run[start:end]
            results = (
                self._run_together(stretch)
                if len(stretch) > 1
                else [self.run(stretch[0], refused.get(stretch[0]["id"]))]
            )
            ending = next((result for result in results if result.ends_turn), None)
            if ending is not None or self.stopped is not None:
                return ending
            start = end
        return None

    def _concurrent(self, call: dict[str, Any], refused: Mapping[str, str]) -> bool:
        return call["id"] not in refused and self.tools.runs_concurrently(call["name"])

    def _run_together(self, calls: list[dict[str, Any]]) -> list[ToolResult]:
        """Calls side by side: their lines open at once, each closes when its call ends."""
        for call in calls:
            self.sink(
                ToolStarted(call["id"], call["name"], self.tools.summarize_call(call["name"], call["input"]))
            )
            self._running[call["id"]] = call

        def record(index: int, result: ToolResult) -> None:
            self._results[calls[index]["id"]] = result
            self._finish_line(calls[index], result)

        run_side_by_side([partial(self._run_hooked, call) for call in calls], record)
        return [self._results[call["id"]] for call in calls]

    def run(self, call: dict[str, Any], refused: str | None) -> ToolResult:
        """Run one call (or answer `refused`, a notice key, without running it); its line is
        opened on screen first, and closed once its result is recorded."""
        name, tool_input = call["name"], call["input"]
        self.sink(ToolStarted(call["id"], name, self.tools.summarize_call(name, tool_input)))
        self._running[call["id"]] = call
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
        name = call["name"]
        tool_input = call["input"] if isinstance(call["input"], dict) else {}
        hooked = self.hooks.runs_for(name)
        token = RUNNING_CALL_ID.set(call["id"])
        try:
            with HOOKED_CALLS if hooked else contextlib.nullcontext():
                return self._run_between_hooks(call, tool_input)
        finally:
            RUNNING_CALL_ID.reset(token)

    def _run_between_hooks(self, call: dict[str, Any], tool_input: dict[str, Any]) -> ToolResult:
        call_id, name = call["id"], call["name"]
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
        self.stopped = self.stopped or before.stop or after.stop
        added = "\n\n".join((*before.context, *after.context))
        if not added:
            return result
        if isinstance(result.content, str):
            return replace(result, content=f"{result.content}\n\n{added}")
        return replace(result, content=[*result.content, {"type": "text", "text": added}])

    def answer_all(self, unanswered: str) -> list[dict[str, Any]]:
        """One tool_result for every open call (calls without a result get the `unanswered`
        notice), after closing the line of the call shown running; none are open afterwards."""
        for running in list(self._running.values()):
            # The user saw the call start: its line must stay, saying it was stopped.
            stopped = ToolResult(prompts.notice("interrupted"), INTERRUPTED_SUMMARY, is_error=True)
            self._finish_line(running, self._results.setdefault(running["id"], stopped))
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
        self._running.pop(call["id"], None)


def _response(result: ToolResult) -> dict[str, Any]:
    """A result as a PostToolUse hook reads it (`tool_response`)."""
    return {"output": result.content, "summary": result.summary, "is_error": result.is_error}


def _tool_result(call: dict[str, Any], result: ToolResult) -> dict[str, Any]:
    answer: dict[str, Any] = {"type": "tool_result", "tool_use_id": call["id"], "content": result.content}
    if result.is_error:
        answer["is_error"] = True
    return answer
