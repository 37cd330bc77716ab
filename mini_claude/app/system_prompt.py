"""The system prompt: `prompts/system.md` filled once per conversation."""

from __future__ import annotations

import datetime as dt
import os
import platform
from collections.abc import Callable
from pathlib import Path

from mini_claude.core import prompts, safe_read
from mini_claude.core.config import protected_dirs
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import attribute, neutralize
from mini_claude.memory.section import memory_section
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.safety.permissions import private_reason

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
    project is fine; one to ~/.ssh/id_ed25519 or its stow target, a FIFO or /dev/zero is skipped
    with a warning)."""
    path = Path(os.path.realpath(project_dir)) / PROJECT_INSTRUCTIONS_FILE  # only a link here is followed
    try:
        found = safe_read.read_text(
            path,
            project_dir,
            PROJECT_INSTRUCTIONS_MAX_BYTES,
            refuse_target=_private_target_reason(project_dir),
        )
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except OSError as error:
        warn(f"{PROJECT_INSTRUCTIONS_FILE} not read: {safe_read.describe(error)}")
        return ""
    if found.warning is not None:  # not UTF-8: read with U+FFFD, or as UTF-16 without its mark
        warn(f"{visible_path(str(path))}: {found.warning}")
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


def _private_target_reason(project_dir: Path) -> safe_read.RefuseTarget:
    """Why a CLAUDE.md symlink's target (the path then opened) stays out of the prompt: what the
    file tools would ask to read (a home dotfile by Permissions' rule, mini-claude's own folders);
    nobody is asked at start-up. A CLAUDE.md that is a file is the project's own, wherever it is."""
    real_project = Path(os.path.realpath(project_dir))
    protected = [Path(os.path.realpath(folder)) for folder in protected_dirs()]
    return lambda real: private_reason(real, real, real_project, Path.home(), protected)
