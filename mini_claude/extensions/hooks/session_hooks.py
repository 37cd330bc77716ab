"""The hooks of one session at the points Claude Code has them: the turn's (`TurnHooks`: a prompt
submitted, before and after a tool, the model stopping, compaction) and the session's own
(SessionStart, SessionEnd, Notification). Each event reaches its hooks on stdin with Claude Code's
field names (`session_id`, `transcript_path`, `cwd`, `permission_mode`, `hook_event_name`, then
the event's own); `tool_name` is Claude Code's name for the tool (`Bash` for run_shell).

What the hooks say goes to the user as one line each (made visible by the front end), and to the
model wrapped in a tag it cannot break out of, framed by prompts/extensions.toml.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from mini_claude.core.errors import PermissionDenied
from mini_claude.core.events import EventSink, Notice
from mini_claude.core.hook_points import PASS, HookVerdict, TurnHooks
from mini_claude.core.prompts import extension_text
from mini_claude.core.untrusted import attribute, visible_text, wrap
from mini_claude.extensions.approvals import HOOK_SOURCE, Approvals
from mini_claude.extensions.hooks.outcome import Outcome, first_line, shown_command
from mini_claude.extensions.hooks.runner import HookRunner
from mini_claude.safety.tool_names import claude_name

HOOK_OUTPUT_TAG = "hook-output"
TARGET_KEYS = ("command", "file_path", "path", "pattern")  # what a hook's question shows of a call
# The tools whose calls the permission checker judges: there a hook's allow or ask is a rule for
# the call. For the others, a hook's ask is asked before the call runs.
CHECKED_TOOLS = frozenset(
    {"run_shell", "read_file", "write_file", "edit_file", "list_files", "grep_search", "skill"}
)

log = logging.getLogger("mini_claude")

# The common fields of every event: session_id, transcript_path, cwd, permission_mode.
SessionInfo = Callable[[], dict[str, Any]]


class SessionHooks(TurnHooks):
    def __init__(
        self, runner: HookRunner, *, sink: EventSink, info: SessionInfo, approvals: Approvals
    ) -> None:
        """A PreToolUse hook's permission decision reaches the permission checker through `approvals`."""
        self.runner = runner
        self.sink = sink
        self.info = info
        self.approvals = approvals
        self._starting: threading.Thread | None = None
        self._session_context: list[str] = []  # SessionStart's, for the next message
        self._lock = threading.Lock()

    # --- the session's own events -------------------------------------------------------------

    def session_started(self, source: str) -> None:
        """SessionStart (`startup`, `resume`, `clear`, `compact`), on a thread: its context goes
        with the next message, which waits for it."""
        if not self.runner.selected("SessionStart", source):
            return
        self._join_start()
        self._starting = threading.Thread(
            target=self._start, args=(source,), name="hook-SessionStart", daemon=True
        )
        self._starting.start()

    def _start(self, source: str) -> None:
        try:
            outcome = self._run("SessionStart", {"source": source}, source)
        except Exception:
            log.exception("SessionStart hooks")
            return
        with self._lock:
            self._session_context += self._contexts(outcome)

    def session_ended(self, reason: str) -> None:
        """SessionEnd (`clear`, `prompt_input_exit`, `other`): waited for, within its timeouts."""
        self._run("SessionEnd", {"reason": reason}, reason)

    def notify(self, message: str, kind: str = "permission_prompt") -> None:
        """Notification, on a thread (a question is on screen meanwhile: its result goes to the log)."""
        if not self.runner.selected("Notification", kind):
            return

        def run() -> None:
            payload = {"message": message, "notification_type": kind}
            outcome = self.runner.run("Notification", {**self._common("Notification"), **payload}, kind)
            for line in [*outcome.problems, *outcome.lines, *outcome.blocks]:
                log.info("Notification hook: %s", visible_text(line))

        threading.Thread(target=run, name="hook-Notification", daemon=True).start()

    def close(self, reason: str) -> None:
        """The session ends: SessionEnd, then every hook still running is stopped (a SessionStart
        hook still running too: nothing waits for it now)."""
        try:
            self.session_ended(reason)
        finally:
            self.runner.close()

    # --- the turn's points (core.hook_points.TurnHooks) ----------------------------------------

    def prompt_submitted(self, prompt: str) -> HookVerdict:
        self._join_start()
        outcome = self._run("UserPromptSubmit", {"prompt": prompt})
        if outcome.stop is not None:
            return HookVerdict(stop=outcome.stop)
        if outcome.blocks:
            reasons = "; ".join(outcome.blocks)
            return HookVerdict(
                block=f"A UserPromptSubmit hook blocked the message (it was not sent): {reasons}"
            )
        with self._lock:
            started, self._session_context = self._session_context, []
        return HookVerdict(context=(*started, *self._contexts(outcome)))

    def before_tool(self, call_id: str, name: str, tool_input: dict[str, Any]) -> HookVerdict:
        self.approvals.end_call()
        payload = {"tool_name": claude_name(name), "tool_input": tool_input, "tool_use_id": call_id}
        outcome = self._run("PreToolUse", payload, name)
        context = tuple(self._contexts(outcome))
        if outcome.stop is not None:
            return HookVerdict(block=extension_text("hook_stopped_tool"), stop=outcome.stop)
        if outcome.blocks or outcome.permission == "deny":
            reasons = "\n".join([*outcome.blocks, *outcome.permission_reasons]) or "(no reason given)"
            text = extension_text(
                "hook_blocked_tool",
                tool=attribute(name),
                output=wrap(HOOK_OUTPUT_TAG, reasons, event="PreToolUse"),
            )
            return HookVerdict(block=text, context=context)
        why = "; ".join(outcome.permission_reasons)
        if outcome.permission in ("allow", "ask"):
            self.approvals.decide_call(name, outcome.permission, first_line(why))
        if outcome.permission == "ask" and name not in CHECKED_TOOLS:
            refused = self._ask_user(name, tool_input, why)
            if refused is not None:
                return HookVerdict(block=refused, context=context)
        return HookVerdict(context=context)

    def after_tool(
        self, call_id: str, name: str, tool_input: dict[str, Any], response: dict[str, Any] | None
    ) -> HookVerdict:
        self.approvals.end_call()
        if response is None:
            return PASS
        payload = {
            "tool_name": claude_name(name), "tool_input": tool_input, "tool_response": response,
            "tool_use_id": call_id,
        }  # fmt: skip
        outcome = self._run("PostToolUse", payload, name)
        feedback = [
            extension_text("hook_tool_feedback", output=wrap(HOOK_OUTPUT_TAG, reason, event="PostToolUse"))
            for reason in outcome.blocks
        ]
        return HookVerdict(context=(*feedback, *self._contexts(outcome)), stop=outcome.stop)

    def runs_for(self, tool: str) -> bool:
        return bool(self.runner.selected("PreToolUse", tool) or self.runner.selected("PostToolUse", tool))

    def stopping(self, again: bool) -> HookVerdict:
        outcome = self._run("Stop", {"stop_hook_active": again})
        if outcome.stop is not None:
            return HookVerdict(stop=outcome.stop)
        if outcome.blocks:
            reasons = wrap(HOOK_OUTPUT_TAG, "\n".join(outcome.blocks), event="Stop")
            return HookVerdict(block=extension_text("hook_stop_blocked", output=reasons))
        return PASS

    def before_compaction(self, trigger: str, focus: str | None) -> None:
        self._run("PreCompact", {"trigger": trigger, "custom_instructions": focus or ""}, trigger)

    def turn_ended(self) -> None:
        self.approvals.end_turn()

    # --- running and telling --------------------------------------------------------------------

    def _run(self, event: str, fields: dict[str, Any], value: str | None = None) -> Outcome:
        if not self.runner.selected(event, value):
            return Outcome()
        outcome = self.runner.run(event, {**self._common(event), **fields}, value)
        for line in outcome.lines:
            self.sink(Notice(line))
        for problem in outcome.problems:
            self.sink(Notice(problem, "warning"))
        if event not in ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"):
            for reason in outcome.blocks:  # exit 2 blocks nothing here: the user reads why
                self.sink(Notice(f"{event} hook: {reason}", "warning"))
        return outcome

    def _common(self, event: str) -> dict[str, Any]:
        return {**self.info(), "hook_event_name": event}

    def _contexts(self, outcome: Outcome) -> list[str]:
        return [_context(spec.event, spec.command, text) for spec, text in outcome.context]

    def _ask_user(self, name: str, tool_input: dict[str, Any], why: str) -> str | None:
        """A hook's `ask` about a tool the permission checker does not judge otherwise, asked by
        it (the hook's rule decides, unless a deny rule does): None for yes, else the refusal the
        model reads."""
        target = next(
            (str(tool_input[key]) for key in TARGET_KEYS if isinstance(tool_input.get(key), str)), name
        )
        reason = HOOK_SOURCE + " asks" + (f": {why}" if why else "")
        try:
            self.approvals.permissions.check_tool(name, target, reason, changes=False)
        except PermissionDenied as refusal:
            return str(refusal)
        return None

    def _join_start(self) -> None:
        starting = self._starting
        if starting is not None:
            while starting.is_alive():
                starting.join(0.05)  # so that Ctrl+C lands
            self._starting = None


def _context(event: str, command: str, text: str) -> str:
    output = wrap(HOOK_OUTPUT_TAG, text, event=event)
    return extension_text(
        "hook_context", event=event, command=attribute(shown_command(command)), output=output
    )
