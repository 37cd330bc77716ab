"""What the model is told of the skills: their names and descriptions once per conversation, in
the system prompt (so the prompt cache holds), and later only what changed, as a reminder."""

from __future__ import annotations

from typing import Any

from mini_claude.core.prompts import extension_text
from mini_claude.core.untrusted import wrap
from mini_claude.extensions.skills.catalog import Catalog

SKILLS_TAG = "available-skills"  # descriptions are the files' words: they cannot leave this tag


class SkillTelling:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._told: dict[str, str] | None = None  # name → description, as the model knows them

    def section(self) -> str:
        """The system prompt's skills section for a new conversation ("" when there are none)."""
        self.catalog.refresh()
        skills = {entry.name: entry.description for entry in self.catalog.model_skills()}
        self._told = skills
        if not skills:
            return ""
        lines = "\n".join(
            extension_text("skill_line", name=name, description=text) for name, text in skills.items()
        )
        return extension_text("skills_section", skills=wrap(SKILLS_TAG, lines))

    def reminder(self) -> list[dict[str, Any]]:
        """A reminder block when the skills changed since the model was last told (else none)."""
        if self._told is None:
            return []
        self.catalog.refresh()
        now = {entry.name: entry.description for entry in self.catalog.model_skills()}
        changes = [
            extension_text(
                "skill_added" if name not in self._told else "skill_edited", name=name, description=text
            )
            for name, text in now.items()
            if self._told.get(name) != text
        ] + [extension_text("skill_removed", name=name) for name in self._told if name not in now]
        self._told = now
        if not changes:
            return []
        return [
            {
                "type": "text",
                "text": extension_text("skills_changed", changes=wrap(SKILLS_TAG, "\n".join(changes))),
            }
        ]
