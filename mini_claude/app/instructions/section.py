"""Instruction files as the model reads them: the system prompt's section, and the reminder that
brings a sub-folder's files or a path rule later. Each file is wrapped in a tag it cannot close,
its path and scope quoted so that a file name cannot either."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mini_claude.app.instructions.imports import Instruction
from mini_claude.core import prompts
from mini_claude.core.untrusted import attribute, contained, neutralize

INSTRUCTIONS_TAG = "project-instructions"
REMINDER_TAG = "system-reminder"


def instructions_section(entries: Sequence[Instruction]) -> str:
    """The system prompt's `# Instructions`, or "" when there are none."""
    files = [wrapped(entry) for entry in entries if entry.text.strip()]
    return prompts.render("instructions.md", files="\n\n".join(files)).strip() if files else ""


def reminder_block(entries: Sequence[Instruction], why: str) -> dict[str, Any]:
    """One text block for the conversation: `why` they arrive now, then the files."""
    files = "\n\n".join(neutralize(wrapped(entry), REMINDER_TAG) for entry in entries)
    return {"type": "text", "text": prompts.render("instructions_reminder.md", why=why, files=files).strip()}


def wrapped(entry: Instruction) -> str:
    attributes = f'path="{attribute(str(entry.path))}" scope="{entry.scope}"'
    if entry.imported_by is not None:
        attributes += f' imported-by="{attribute(str(entry.imported_by))}"'
    text = contained(entry.text.strip(), INSTRUCTIONS_TAG)
    return f"<{INSTRUCTIONS_TAG} {attributes}>\n{text}\n</{INSTRUCTIONS_TAG}>"
