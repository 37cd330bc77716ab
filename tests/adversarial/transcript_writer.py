"""A process that saves a scripted conversation through the real TranscriptWriter, for the crash,
concurrency and full-disk tests (run as `python -m tests.adversarial.transcript_writer`).

    loop SESSIONS_DIR [SESSION_ID]   append records for ever, printing each one's number once written
    fill SESSIONS_DIR RECORD_BYTES   append until saving stops, append a few more, then load the
                                     transcript and print a JSON report on the last line

Record number i is the same in every run (see `conversation_record`), so a test can say exactly
which messages a transcript of the first k records must load as.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.sessions.loading.repair import repair_conversation
from mini_claude.sessions.transcript.writer import TranscriptWriter

BIG_EVERY = 3  # every third tool result is large, so that kills land in the middle of a write
BIG_BYTES = 2**20
EXTRA_AFTER_STOP = 5
# Text no transcript should change: other scripts, a line separator, an escape code; and a lone
# surrogate (a non-UTF-8 file name kept by surrogateescape), which loads as U+FFFD: no request
# could carry it.
ODD_TEXT = "naïve 中文 😀 \u2028 \udcff \x1b[31m"


def conversation_record(i: int, record_bytes: int = 0) -> tuple[str, list[dict[str, Any]], list[str]]:
    """(kind, content blocks, memory file names) of record number i."""
    turn, step = divmod(i, 5)
    tool_id = f"toolu_{turn:06d}"
    if step == 0:
        return "user", [{"type": "text", "text": f"question {turn} {ODD_TEXT}"}], []
    if step == 1:
        return (
            "memories",
            [{"type": "text", "text": f"<system-reminder>memory {turn}</system-reminder>"}],
            [f"project_fact_{turn}.md"],
        )
    if step == 2:
        blocks = [
            {"type": "text", "text": f"Reading {turn}."},
            {"type": "tool_use", "id": tool_id, "name": "read_file", "input": {"file_path": f"f{turn}.txt"}},
        ]
        return "assistant", blocks, []
    if step == 3:
        size = record_bytes or (BIG_BYTES if turn % BIG_EVERY == 0 else 2_000)
        output = (f"{turn} {ODD_TEXT}\n" * (size // 20 + 1))[:size]
        return "tool_results", [{"type": "tool_result", "tool_use_id": tool_id, "content": output}], []
    return "assistant", [{"type": "text", "text": f"Answer {turn}: done."}], []


def write_record(writer: TranscriptWriter, i: int, record_bytes: int = 0) -> None:
    kind, blocks, files = conversation_record(i, record_bytes)
    if kind == "memories":
        writer.add_memories(blocks, files)
    else:
        writer.add(kind, blocks)


def expected_messages(count: int, record_bytes: int = 0) -> list[dict[str, Any]]:
    """The conversation the first `count` records make, as the agent held it (roles merged), with
    the repair a load adds (an unanswered tool call answered as interrupted)."""
    messages: list[dict[str, Any]] = []
    for i in range(count):
        kind, blocks, _ = conversation_record(i, record_bytes)
        blocks = [
            {k: v.replace("\udcff", "\ufffd") if isinstance(v, str) else v for k, v in b.items()}
            for b in blocks
        ]
        role = "assistant" if kind == "assistant" else "user"
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": list(blocks)})
    return repair_conversation(messages).messages


def main() -> None:
    mode, folder = sys.argv[1], Path(sys.argv[2])
    if mode == "loop":
        session_id = sys.argv[3] if len(sys.argv) > 3 else None
        writer = TranscriptWriter(folder, cwd="/work", project="/work", model="m", session_id=session_id)
        i = 0
        while True:
            write_record(writer, i)
            assert writer.stopped is None, writer.stopped
            print(f"{writer.session_id} {i}", flush=True)
            i += 1
    record_bytes = int(sys.argv[3])
    warnings: list[str] = []
    writer = TranscriptWriter(folder, cwd="/work", project="/work", model="m", warn=warnings.append)
    written = 0
    while writer.stopped is None:
        write_record(writer, written, record_bytes)
        written += 0 if writer.stopped else 1
    for extra in range(EXTRA_AFTER_STOP):  # the session goes on: these are simply not saved
        write_record(writer, written + 1 + extra, record_bytes)
    loaded = load_transcript(writer.path)
    report = {
        "written": written,
        "warnings": warnings,
        "loaded_as_expected": loaded.messages == expected_messages(written, record_bytes),
        "problems": loaded.problems,
        "file_size": writer.path.stat().st_size,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
