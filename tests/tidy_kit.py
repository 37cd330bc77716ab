"""What the tidy tests share: scripted side-model answers in the tidy protocol (which memories to
read, which changes to make), a user who answers the review's questions from a list, and a
memory folder seeded with files."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.core.config import Settings, load_settings
from mini_claude.llm.client import ModelClient
from mini_claude.ui.commands.memory.tidy_review import ReviewIO
from tests.fake_api import FakeAnthropic, Reply, text_reply
from tests.kit import memory_text, seed_memories, side_queries, side_query_message

seed = seed_memories


def read_answer(*file_names: str) -> Reply:
    return text_reply(json.dumps({"read": list(file_names)}))


def groups_answer(*groups: list[str]) -> Reply:
    """The answer to the headers of many memories: the groups to read whole."""
    return text_reply(json.dumps({"groups": list(groups)}))


def changes_answer(*changes: dict[str, Any]) -> Reply:
    return text_reply(json.dumps({"changes": list(changes)}))


def change(file_name: str, reason: str = "a reason", **memory: str) -> dict[str, Any]:
    return {"action": "change", "file": file_name, "content": memory_text(**memory), "reason": reason}


def delete(file_name: str, reason: str = "a duplicate") -> dict[str, Any]:
    return {"action": "delete", "file": file_name, "reason": reason}


def create(reason: str = "it was never saved", **memory: str) -> dict[str, Any]:
    return {"action": "create", "content": memory_text(**memory), "reason": reason}


def snapshot(memory_dir: Path) -> dict[str, bytes]:
    """Every memory file and the index, as bytes (the trash and dot files left aside)."""
    return {p.name: p.read_bytes() for p in sorted(memory_dir.iterdir()) if p.suffix == ".md"}


def tidy_settings(fake: FakeAnthropic) -> Settings:
    settings = load_settings()
    settings.base_url, settings.api_key = fake.base_url, "test-key"
    return settings


def model(fake: FakeAnthropic) -> ModelClient:
    return ModelClient(tidy_settings(fake))


def tidy_requests(fake: FakeAnthropic) -> list[str]:
    """The user message of every side query the tidy sent, in order."""
    return [side_query_message(request) for request in side_queries(fake)]


@dataclass
class ScriptedUser:
    """Answers the review's yes/no questions from `answers`, in order (None: the user cancels,
    as Ctrl+C or Esc do); records what was shown."""

    answers: list[bool | None] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)

    def io(self) -> ReviewIO:
        return ReviewIO(
            self.shown.append, self.shown.append, lambda lines: self.shown.extend(lines), self.confirm
        )

    def confirm(self, question: str) -> bool | None:
        self.questions.append(question)
        if not self.answers:
            raise AssertionError(f"unexpected question: {question}")
        return self.answers.pop(0)

    @property
    def text(self) -> str:
        return "\n".join(self.shown)
