"""The end of a conversation read from the end of its transcript (what a resume shows at once):
the same messages the whole load ends with, however large the records before them."""

from __future__ import annotations

from pathlib import Path

from mini_claude.core.config import project_sessions_dir
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.sessions.loading.recent import FIRST_READ_BYTES, recent_messages
from mini_claude.sessions.transcript.writer import TranscriptWriter


def write(project: Path, turns: int, output_bytes: int) -> Path:
    writer = TranscriptWriter(project_sessions_dir(project), cwd=project, project=project, model="m")
    for turn in range(turns):
        tool_id = f"toolu_{turn:04d}"
        writer.add("user", [{"type": "text", "text": f"question {turn}"}])
        writer.add_memories(
            [{"type": "text", "text": f"<system-reminder>m{turn}</system-reminder>"}], ["m.md"]
        )
        call = {"type": "tool_use", "id": tool_id, "name": "read_file", "input": {"file_path": "a"}}
        writer.add("assistant", [call])
        writer.add(
            "tool_results", [{"type": "tool_result", "tool_use_id": tool_id, "content": "x" * output_bytes}]
        )
        writer.add("assistant", [{"type": "text", "text": f"answer {turn}"}])
    writer.close()
    return writer.path


def test_the_tail_is_what_the_whole_load_ends_with(project_dir: Path) -> None:
    path = write(project_dir, turns=20, output_bytes=FIRST_READ_BYTES // 3)  # a read-back in several steps

    recent = recent_messages(path, 3)
    messages = load_transcript(path).messages

    assert recent.messages == messages[-len(recent.messages) :]
    assert recent.messages[0]["content"][0]["text"] == "question 17"
    assert recent.earlier == len(messages) - len(recent.messages) == 68


def test_a_short_session_or_a_torn_end(project_dir: Path) -> None:
    path = write(project_dir, turns=2, output_bytes=10)
    with path.open("ab") as handle:
        handle.write(b'{"type":"user","n":9,"content":[{"type":"te')  # a crash mid-write

    recent = recent_messages(path, 3)

    assert recent.earlier == 0
    assert recent.messages == load_transcript(path).messages
