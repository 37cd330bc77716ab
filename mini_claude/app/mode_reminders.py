"""What the model is told of the permission mode at the start of each message: that plan mode is
on (every message, as Claude Code does), or that it just went off. A reminder, not a change of
the system prompt, which stays cached."""

from __future__ import annotations

from typing import Any

from mini_claude.core import prompts
from mini_claude.safety.permissions import Permissions


class ModeReminders:
    def __init__(self, permissions: Permissions) -> None:
        self.permissions = permissions
        self._planning = False  # whether the last message went out in plan mode

    def __call__(self) -> list[dict[str, Any]]:
        """The text blocks the next message starts with."""
        planning, was_planning = self.permissions.mode == "plan", self._planning
        self._planning = planning
        name = "plan_mode.md" if planning else "plan_mode_off.md" if was_planning else None
        if name is None:
            return []
        text = prompts.load(name).strip()
        return [{"type": "text", "text": f"<system-reminder>\n{text}\n</system-reminder>"}]
