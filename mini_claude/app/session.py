"""Wiring one session together: model client, tools, permissions, memory, agent.

The REPL and print mode are two thin front ends over what `build_session` returns. Nothing here
decides anything: each part owns its own rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.agent.loop import Agent
from mini_claude.app.instructions.hierarchy import InstructionSet, project_places
from mini_claude.app.instructions.reminders import InstructionReminders
from mini_claude.app.system_prompt import PromptOptions, SystemPrompt
from mini_claude.core.config import Settings, memory_project_root, protected_dirs
from mini_claude.core.events import EventSink, Notice, WarningsOnce
from mini_claude.llm.client import ModelClient
from mini_claude.memory.recall.history import RecallHistory
from mini_claude.memory.recall.memory_recall import MemoryRecall
from mini_claude.memory.startup import MemoryStartup
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.project_record import remember_project
from mini_claude.safety.permissions import AskCallback, Permissions
from mini_claude.sessions.recorder import TranscriptRecorder
from mini_claude.sessions.transcript.writer import TranscriptWriter
from mini_claude.tools.base import ToolContext
from mini_claude.tools.memory_writer import MemoryStoreWriter
from mini_claude.tools.registry import default_registry


@dataclass
class Session:
    settings: Settings
    llm: ModelClient
    permissions: Permissions
    store: MemoryStore
    memory_startup: MemoryStartup
    recall: MemoryRecall
    agent: Agent
    transcript: TranscriptRecorder
    system_prompt: SystemPrompt
    warn: Callable[[str], None] = field(default=lambda _: None, repr=False)
    _warmed_up: bool = field(default=False, init=False, repr=False)

    def warm_up(self) -> None:
        """Start what the first message needs (memory re-index, SDK import) without waiting; and,
        once: tell what the settings files could not give, write down whose project folder this
        is, and, the session in use being known (a resumed one is chosen first), remove old
        transcripts."""
        if self.settings.memory_enabled:
            self.memory_startup.start()
        self.llm.preload()
        if not self._warmed_up:
            self._warmed_up = True
            for note in self.settings.notes:
                self.warn(note)
            remember_project(self.settings)
            self.transcript.remove_expired_in_background(self.settings.session_retention_days)

    def instructions(self) -> InstructionSet:
        """The instruction files of the current conversation (or of the next, before the first)."""
        return self.system_prompt.instructions()

    def new_conversation(self) -> None:
        """/clear: a new conversation, saved in a new transcript (the old one stays)."""
        self.agent.clear()
        self.transcript.start_new()


def build_session(
    settings: Settings, *, sink: EventSink, ask: AskCallback | None, print_mode: bool = False
) -> Session:
    """`sink` hears every event, start-up warnings included (each once, from any thread);
    `print_mode`: the transcript says so (the session list marks such sessions)."""
    project_dir = Path(settings.project_dir).resolve()
    warn = WarningsOnce(sink)
    store = MemoryStore(settings.memory_dir)
    llm = ModelClient(settings, on_retry=sink)
    remembers = settings.memory_enabled  # off: no index, no recall, no saves by the model
    permissions = Permissions(
        project_dir,
        mode=settings.permission_mode,
        ask=ask,
        memory_dir=store.root if remembers else None,
        protected_dirs=protected_dirs(),
        additional_dirs=settings.additional_dirs,
    )
    # The weekly tidy hint is for someone who can run /memory tidy: not for print mode.
    hint = (lambda line: sink(Notice(line, "info"))) if ask is not None and llm.configured else None
    memory_startup = MemoryStartup(store, warn, hint=hint)
    recall = MemoryRecall(store, llm, on_recalled=RecallHistory(store.root).record_in_background)
    first_transcript = TranscriptWriter(
        settings.sessions_dir, cwd=project_dir, project=memory_project_root(project_dir),
        model=settings.model, warn=warn, print_mode=print_mode,
    )  # fmt: skip
    transcript = TranscriptRecorder(first_transcript)
    reminders = InstructionReminders(project_dir, project_places(project_dir), warn)
    options = PromptOptions(
        remembers, settings.additional_dirs, settings.system_prompt, settings.append_system_prompt
    )
    ready = memory_startup.wait if remembers else lambda: None
    system_prompt = SystemPrompt(
        project_dir, store, ready=ready, warn=warn, options=options, reminders=reminders
    )
    agent = Agent(
        llm=llm,
        tools=default_registry(),
        tool_context=ToolContext(
            project_dir,
            permissions,
            MemoryStoreWriter(store) if remembers else None,
            reminders.tool_used,
            before_change=transcript.before_change,
        ),
        sink=sink,
        save=transcript,
        build_system_prompt=system_prompt,
        model=settings.model,
        max_tokens=settings.max_tokens,
        max_turns=settings.max_turns,
        recall=recall if remembers else None,
        context_window=settings.context_window,
        reminders=reminders.take,
    )
    return Session(
        settings, llm, permissions, store, memory_startup, recall, agent, transcript, system_prompt, warn
    )
