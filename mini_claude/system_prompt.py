"""The system prompt: `prompts/system.md` filled once per conversation."""

from __future__ import annotations

import datetime as dt
import platform
from pathlib import Path

from mini_claude import prompts
from mini_claude.untrusted import neutralize

PROJECT_INSTRUCTIONS_FILE = "CLAUDE.md"
PROJECT_INSTRUCTIONS_MAX_BYTES = 40_000


def build_system_prompt(project_dir: Path, memory_section: str, today: dt.date | None = None) -> str:
    today = today or dt.date.today()
    return (
        prompts.render(
            "system.md",
            cwd=str(project_dir),
            platform=f"{platform.system()} {platform.release()}".strip(),
            date=f"{today.isoformat()} ({today.strftime('%A')})",
            project_instructions=_project_instructions(project_dir),
            memory=memory_section,
        ).strip()
        + "\n"
    )


def _project_instructions(project_dir: Path) -> str:
    path = project_dir / PROJECT_INSTRUCTIONS_FILE
    try:
        with path.open("rb") as handle:
            raw = handle.read(PROJECT_INSTRUCTIONS_MAX_BYTES + 1)
    except OSError:
        return ""
    text = raw[:PROJECT_INSTRUCTIONS_MAX_BYTES].decode("utf-8", errors="ignore").strip()
    if len(raw) > PROJECT_INSTRUCTIONS_MAX_BYTES:
        text += f"\n[CLAUDE.md was cut at {PROJECT_INSTRUCTIONS_MAX_BYTES} bytes: keep it shorter.]"
    if not text:
        return ""
    return prompts.render(
        "project_instructions.md", path=str(path), content=neutralize(text, "project-instructions")
    ).strip()
