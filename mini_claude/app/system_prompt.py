"""The system prompt: `prompts/system.md`, the instruction files and the memory section, filled
once per conversation (what changes during it arrives as reminders, so the prompt cache holds)."""

from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mini_claude.app.instructions.hierarchy import InstructionSet, load_instructions
from mini_claude.app.instructions.reminders import InstructionReminders
from mini_claude.app.instructions.section import instructions_section
from mini_claude.core import prompts
from mini_claude.core.untrusted import attribute
from mini_claude.memory.scopes import MemoryScopes
from mini_claude.memory.section import memory_section
from mini_claude.memory.store.memory_store import MemoryStore

Warn = Callable[[str], None]


@dataclass(frozen=True)
class PromptOptions:
    memory: bool = True  # automatic memory on: its guidance and index
    additional_dirs: tuple[Path, ...] = ()  # folders the file tools treat as inside the project
    replacement: str | None = None  # --system-prompt: instead of prompts/system.md
    appended: str | None = None  # --append-system-prompt


class SystemPrompt:
    """Builds the system prompt when a conversation starts, once the memory start-up is done
    (`ready`), so hand edits are in the index; `warn` hears why an instruction file was skipped
    or cut. `last` is what the latest conversation started with; `reminders` starts afresh.
    `options.memory` False (memory off): no memory guidance, no index."""

    def __init__(
        self,
        project_dir: Path,
        memories: MemoryScopes | MemoryStore,
        *,
        ready: Callable[[], None],
        warn: Warn,
        options: PromptOptions | None = None,
        reminders: InstructionReminders | None = None,
        skills: Callable[[], str] | None = None,
    ) -> None:
        self.project_dir = project_dir
        self.memories = memories
        self.ready = ready
        self.warn = warn
        self.options = options or PromptOptions()
        self.reminders = reminders
        self.skills = skills  # the skills section ("" for none), told once per conversation
        self.last: InstructionSet | None = None

    def __call__(self) -> str:
        self.ready()
        loaded = load_instructions(self.project_dir)
        self.last = loaded
        if self.reminders is not None:
            self.reminders.start(loaded)
        memory = memory_section(self.memories) if self.options.memory else prompts.load("memory_off.md")
        skills = self.skills() if self.skills is not None else ""
        return build_system_prompt(
            self.project_dir, memory, warn=self.warn, loaded=loaded, options=self.options, skills=skills
        )

    def instructions(self) -> InstructionSet:
        """What the latest conversation started with; what one would start with now, before any."""
        return self.last if self.last is not None else load_instructions(self.project_dir)


def build_system_prompt(
    project_dir: Path,
    memory_section: str,
    today: dt.date | None = None,
    warn: Warn = lambda _: None,
    *,
    loaded: InstructionSet | None = None,
    options: PromptOptions | None = None,
    skills: str = "",
) -> str:
    """`warn` hears, in one line each, why an instruction file was skipped or cut."""
    today = today or dt.date.today()
    options = options or PromptOptions()
    loaded = loaded if loaded is not None else load_instructions(project_dir)
    for line in [*(skipped.reason for skipped in loaded.skipped), *loaded.notes]:
        warn(line)
    instructions = instructions_section(loaded.loaded)
    if options.replacement is not None:
        parts = (options.replacement.strip(), instructions, skills, memory_section.strip())
        text = "\n\n".join(part for part in parts if part)
    else:
        text = prompts.render(
            "system.md",
            cwd=attribute(str(project_dir)),  # a folder's name is outside text too
            platform=f"{platform.system()} {platform.release()}".strip(),
            date=f"{today.isoformat()} ({today.strftime('%A')})",
            additional_dirs=_additional_dirs_line(options.additional_dirs),
            project_instructions=instructions,
            skills=skills + "\n\n" if skills else "",
            memory=memory_section,
        ).strip()
    if options.appended and options.appended.strip():
        text += "\n\n" + options.appended.strip()
    return text + "\n"


def _additional_dirs_line(folders: tuple[Path, ...]) -> str:
    if not folders:
        return ""
    quoted = ", ".join(f'"{attribute(str(folder))}"' for folder in folders)
    return "\n" + prompts.notice("additional_dirs", folders=quoted)
