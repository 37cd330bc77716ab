"""What a hook's run means, by Claude Code's rules:

- exit 0: success. Its stdout is context for the model after UserPromptSubmit and SessionStart,
  else a line for the user. Stdout that is a JSON object is read instead: `continue: false` with
  `stopReason` stops the turn, `decision: "block"` with `reason` blocks, `systemMessage` is shown,
  `suppressOutput` hides the rest, `hookSpecificOutput.permissionDecision` (allow, deny, ask) and
  `.additionalContext` speak for PreToolUse (and context for the other events).
- exit 2: block; its stderr is the reason (the model's for tool events and Stop, else the user's).
- any other exit, a timeout, a command that could not start: one line for the user, nothing blocked.

Several hooks of one event answer together (`Outcome`): any block blocks, deny wins over ask over
allow, and every context and line is kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from mini_claude.core.config_sources import HookSpec
from mini_claude.extensions.hooks.process import HookRun

Permission = Literal["allow", "deny", "ask"]
PERMISSIONS: tuple[Permission, ...] = ("deny", "ask", "allow")  # which wins, first first
CONTEXT_EVENTS = ("UserPromptSubmit", "SessionStart")  # plain stdout is context for the model
BLOCKING_EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")
LINE_MAX_CHARS = 200  # of a hook's output shown to the user in one line
CONTEXT_MAX_CHARS = 10_000  # of one hook's context for the model, as Claude Code caps it
COMMAND_SHOWN_CHARS = 60
EXIT_HINTS = {126: " (is it executable? chmod +x)", 127: " (command not found)"}


@dataclass
class Outcome:
    """What the hooks of one occurrence of an event said, together."""

    blocks: list[str] = field(default_factory=list)  # reasons (exit 2, decision block, deny)
    permission: Permission | None = None
    permission_reasons: list[str] = field(default_factory=list)
    context: list[tuple[HookSpec, str]] = field(default_factory=list)  # (hook, text) for the model
    lines: list[str] = field(default_factory=list)  # what hooks said, for the user: a line each
    problems: list[str] = field(default_factory=list)  # hooks that failed, for the user: a line each
    stop: str | None = None  # `continue: false`: the stopReason (or a default)

    def add(self, spec: HookSpec, run: HookRun) -> None:
        """One hook's run, read by the rules above."""
        name = f"{spec.event} hook {shown_command(spec.command)}"
        if run.error is not None:
            self.problems.append(f"{name} could not start: {run.error}")
        elif run.timed_out:
            self.problems.append(f"{name} timed out after {spec.timeout:g} s and was stopped")
        elif run.exit_code == 2:
            reason = _cut(run.stderr.strip(), CONTEXT_MAX_CHARS)
            self.blocks.append(reason or f"{name} exited 2 (no reason given)")
        elif run.exit_code != 0:
            first = first_line(run.stderr) or first_line(run.stdout)
            hint = EXIT_HINTS.get(run.exit_code or 0, "")
            self.problems.append(
                f"{name} failed (exit {run.exit_code}{hint})" + (f": {first}" if first else "")
            )
        elif (answer := _json_object(run.stdout)) is not None:
            self._answer(spec, name, answer)
        elif run.stdout.strip():
            self._said(spec, name, run.stdout.strip())

    def _said(self, spec: HookSpec, name: str, text: str) -> None:
        if spec.event in CONTEXT_EVENTS:
            self.context.append((spec, _cut(text, CONTEXT_MAX_CHARS)))
        else:
            self.lines.append(f"{name}: {first_line(text)}")

    def _answer(self, spec: HookSpec, name: str, answer: dict[str, Any]) -> None:
        wrong: list[str] = []
        if answer.get("continue") is False:
            self.stop = _text(answer, "stopReason", wrong) or f"{name} stopped the turn"
        elif "continue" in answer and answer["continue"] is not True:
            wrong.append("continue (true or false)")
        if message := _text(answer, "systemMessage", wrong):
            self.lines.append(f"{name}: {first_line(message)}")
        reason = _text(answer, "reason", wrong)
        decision = answer.get("decision")
        if decision == "block":
            self.blocks.append(reason or f"{name} blocked it (no reason given)")
        elif decision == "approve" and spec.event == "PreToolUse":
            self._permission("allow", reason)
        elif decision not in (None, "approve"):
            wrong.append('decision ("block")')
        specific = answer.get("hookSpecificOutput")
        if isinstance(specific, dict):
            self._specific(spec, specific, wrong)
        elif specific is not None:
            wrong.append("hookSpecificOutput (an object)")
        if wrong:
            self.problems.append(
                f"{name}: its JSON output has values of the wrong kind, ignored: {', '.join(wrong)}"
            )

    def _specific(self, spec: HookSpec, specific: dict[str, Any], wrong: list[str]) -> None:
        decision = specific.get("permissionDecision")
        reason = _text(specific, "permissionDecisionReason", wrong)
        if decision in PERMISSIONS and spec.event == "PreToolUse":
            self._permission(decision, reason)
        elif decision is not None:
            wrong.append("permissionDecision (allow, deny or ask, for PreToolUse)")
        if context := _text(specific, "additionalContext", wrong):
            self.context.append((spec, _cut(context, CONTEXT_MAX_CHARS)))

    def _permission(self, decision: Permission, reason: str) -> None:
        if self.permission is None or PERMISSIONS.index(decision) < PERMISSIONS.index(self.permission):
            self.permission = decision
        if reason:
            self.permission_reasons.append(reason)


def _json_object(stdout: str) -> dict[str, Any] | None:
    """Stdout as a JSON object, or None when it is not one (then it is plain text)."""
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _text(answer: dict[str, Any], key: str, wrong: list[str]) -> str:
    value = answer.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        wrong.append(f"{key} (text)")
        return ""
    return value.strip()


def first_line(text: str) -> str:
    """A hook's output in one line for the user: its first line, cut, saying when more follows."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return _cut(lines[0], LINE_MAX_CHARS) + more


def shown_command(command: str) -> str:
    """`command` as a hook is named to the user: its first line, cut."""
    lines = [line.strip() for line in command.strip().splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if len(first) > COMMAND_SHOWN_CHARS:  # its start and its end (a script's name) both matter
        keep = COMMAND_SHOWN_CHARS // 3
        first = first[:keep] + "…" + first[-(COMMAND_SHOWN_CHARS - keep - 1) :]
    return f"`{first}{' …' if len(lines) > 1 else ''}`"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
