"""The system prompt: `prompts/system.md` filled once per conversation."""

from __future__ import annotations

import datetime as dt
import os
import platform
from collections.abc import Callable
from pathlib import Path

from mini_claude import prompts, safe_read
from mini_claude.memory.section import memory_section
from mini_claude.memory.store import MemoryStore
from mini_claude.paths import visible_path
from mini_claude.untrusted import attribute, neutralize

PROJECT_INSTRUCTIONS_FILE = "CLAUDE.md"
PROJECT_INSTRUCTIONS_MAX_BYTES = 40_000

Warn = Callable[[str], None]


class SystemPrompt:
    """Builds the system prompt when a conversation starts, once the memory start-up is done
    (`ready`), so hand edits are in the index; `warn` hears why a start-up file was skipped."""

    def __init__(
        self, project_dir: Path, store: MemoryStore, *, ready: Callable[[], None], warn: Warn
    ) -> None:
        self.project_dir = project_dir
        self.store = store
        self.ready = ready
        self.warn = warn

    def __call__(self) -> str:
        self.ready()
        return build_system_prompt(self.project_dir, memory_section(self.store), warn=self.warn)


def build_system_prompt(
    project_dir: Path, memory_section: str, today: dt.date | None = None, warn: Warn = lambda _: None
) -> str:
    """`warn` hears, in one line each, why a start-up file was skipped or cut."""
    today = today or dt.date.today()
    return (
        prompts.render(
            "system.md",
            cwd=attribute(str(project_dir)),  # a folder's name is outside text too
            platform=f"{platform.system()} {platform.release()}".strip(),
            date=f"{today.isoformat()} ({today.strftime('%A')})",
            project_instructions=_project_instructions(project_dir, warn),
            memory=memory_section,
        ).strip()
        + "\n"
    )


def _project_instructions(project_dir: Path, warn: Warn) -> str:
    """CLAUDE.md, if it is a regular file resolving inside the project (a symlink to a file in the
    project is fine; one to ~/.ssh/id_ed25519, a FIFO or /dev/zero is skipped with a warning)."""
    path = project_dir / PROJECT_INSTRUCTIONS_FILE
    try:
        found = safe_read.read_text(path, project_dir, PROJECT_INSTRUCTIONS_MAX_BYTES)
        _refuse_home_dotfile(path, project_dir)
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except OSError as error:
        warn(f"{PROJECT_INSTRUCTIONS_FILE} not read: {safe_read.describe(error)}")
        return ""
    text = found.text.strip()
    if found.was_cut:
        limit = safe_read.format_size(PROJECT_INSTRUCTIONS_MAX_BYTES)
        warn(
            f"{visible_path(str(path))} is {safe_read.format_size(found.size)}: only its first {limit} "
            "are used; keep it shorter"
        )
        text += "\n" + prompts.notice("project_instructions_cut", max_bytes=PROJECT_INSTRUCTIONS_MAX_BYTES)
    if not text:
        return ""
    return prompts.render(
        "project_instructions.md", path=attribute(str(path)), content=neutralize(text, "project-instructions")
    ).strip()


def _refuse_home_dotfile(path: Path, project_dir: Path) -> None:
    """Started in `~`, a CLAUDE.md symlink to `.ssh/id_ed25519` is "inside the project": a home
    dot folder's files stay out of the prompt unless the project itself lives in that folder."""
    home = Path(os.path.realpath(Path.home()))
    real = Path(os.path.realpath(path))
    if real == home or not real.is_relative_to(home) or not os.path.islink(path):
        return
    top = home / real.relative_to(home).parts[0]
    if top.name.startswith(".") and not project_dir.is_relative_to(top):
        raise safe_read.UnreadableFile(
            f"{visible_path(str(path))} is a symlink to {visible_path(str(real))}, a home dotfile"
        )
