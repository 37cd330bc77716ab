"""LoCoMo (Maharana et al., ACL 2024) as memories: each dialog turn one `project` memory file, each
question a query with the turns that answer it (its evidence).

The data is licensed for evaluation only (CC BY-NC 4.0): it is read from `../shared/bench-data/locomo/`
beside the repository (or $MINI_CLAUDE_LOCOMO_DIR, for a worktree elsewhere) and written only into
the bench's temporary folders, never into the product or the repository."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.store.naming import memory_file_name

DATA_FILE = "locomo-dev.json"
DIR_VARIABLE = "MINI_CLAUDE_LOCOMO_DIR"
DESCRIPTION_TEXT_CHARS = 100
# Each turn's file time: its session's date plus this much per turn before it, so the turns of a
# session are written in dialog order, a minute apart, as memories saved during a chat would be.
TURN_SECONDS = 60
_EVIDENCE_ID = re.compile(r"D\d+:\d+")
_SEPARATORS = re.compile(r"[;,\s]+")
_SESSION = re.compile(r"session_(\d+)")


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]  # file names of the turns that answer it
    category: int


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    memories: dict[str, tuple[str, float]]  # file name -> (file text, mtime: when it was said)
    questions: list[Question]


def data_dir() -> Path:
    override = os.environ.get(DIR_VARIABLE)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2].parent / "shared" / "bench-data" / "locomo"


def load(path: Path | None = None) -> list[Conversation] | None:
    """The conversations, or None when the data is not there."""
    file = (path or data_dir()) / DATA_FILE
    if not file.is_file():
        return None
    samples = json.loads(file.read_text(encoding="utf-8"))
    return [_conversation(sample) for sample in samples]


def session_time(text: str) -> float:
    """`1:56 pm on 8 May, 2023` as a timestamp (local time, as file times are shown)."""
    return dt.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").timestamp()


def _conversation(sample: dict[str, object]) -> Conversation:
    conversation = sample["conversation"]
    assert isinstance(conversation, dict)
    memories: dict[str, tuple[str, float]] = {}
    file_of: dict[str, str] = {}
    taken: set[str] = set()
    for key, turns in conversation.items():
        session = _SESSION.fullmatch(key)
        if session is None or not isinstance(turns, list):
            continue
        date = conversation[f"{key}_date_time"]
        for number, turn in enumerate(turns):
            file_name = memory_file_name("project", turn["dia_id"], taken)
            taken.add(file_name.casefold())
            file_of[turn["dia_id"]] = file_name
            memories[file_name] = (_memory_text(turn, date), session_time(date) + number * TURN_SECONDS)
    questions = []
    qa = sample["qa"]
    assert isinstance(qa, list)
    for item in qa:
        evidence = frozenset(
            file_of[part]
            for entry in item.get("evidence", [])
            for part in _SEPARATORS.split(str(entry))
            if _EVIDENCE_ID.fullmatch(part) and part in file_of
        )
        if evidence:
            questions.append(Question(str(item["question"]), evidence, int(item["category"])))
    return Conversation(str(sample["sample_id"]), memories, questions)


def _memory_text(turn: dict[str, str], date: str) -> str:
    speaker, text = turn["speaker"], turn["text"]
    body = f"{speaker} said on {date}: {text}"
    if turn.get("blip_caption"):
        body += f" [shares a photo: {turn['blip_caption']}]"
    fields = {
        "name": turn["dia_id"],
        "description": f"{speaker} on {date}: {text[:DESCRIPTION_TEXT_CHARS]}",
        "type": "project",
    }
    return frontmatter.format(fields, body + "\n")


def write_memories(conversation: Conversation, root: Path) -> None:
    """The conversation's turns as memory files in `root`, each dated when it was said."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    for file_name, (text, mtime) in conversation.memories.items():
        path = root / file_name
        path.write_text(text, encoding="utf-8")
        os.utime(path, (mtime, mtime))
