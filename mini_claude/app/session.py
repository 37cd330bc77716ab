"""Wiring one session together: model client, tools, permissions, memory, agent.

The REPL and print mode are two thin front ends over what `build_session` returns. Nothing here
decides anything: each part owns its own rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mini_claude.agent.loop import Agent
from mini_claude.app import permission_setup
from mini_claude.app.local_settings import LocalSettings
from mini_claude.app.mode_reminders import ModeReminders
from mini_claude.app.system_prompt import SystemPrompt
from mini_claude.core.config import Settings, memory_project_root, protected_dirs
from mini_claude.core.events import Event, EventSink, Notice, WarningsOnce
from mini_claude.llm.client import ModelClient
from mini_claude.memory.recall.history import RecallHistory
from mini_claude.memory.recall.memory_recall import MemoryRecall
from mini_claude.memory.startup import MemoryStartup
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.store.project_record import remember_project
from mini_claude.safety.permissions import AskCallback, Permissions
from mini_claude.safety.rules import Behaviour, Rule, RuleEntry, parse_rule
from mini_claude.sessions.recorder import TranscriptRecorder
from mini_claude.sessions.transcript.writer import TranscriptWriter
from mini_claude.tools.base import ToolContext
from mini_claude.tools.memory_writer import MemoryStoreWriter
from mini_claude.tools.plan import PLANS_FOLDER, PlanPresenter
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
    local_settings: LocalSettings
    _warmed_up: bool = field(default=False, init=False, repr=False)

    def warm_up(self) -> None:
        """Start what the first message needs (memory re-index, SDK import) without waiting; and,
        once: write down whose project folder this is, and, the session in use being known (a
        resumed one is chosen first), remove old transcripts."""
        self.memory_startup.start()
        self.llm.preload()
        if not self._warmed_up:
            self._warmed_up = True
            remember_project(self.settings)
            self.transcript.remove_expired_in_background(self.settings.session_retention_days)

    def new_conversation(self) -> None:
        """/clear: a new conversation, saved in a new transcript (the old one stays)."""
        self.agent.clear()
        self.permissions.new_conversation()
        self.transcript.start_new()

    def reload_rules(self, warn: permission_setup.Warn) -> None:
        """Read the rules again (after /permissions changed the local settings file)."""
        found = _permission_settings(self.settings, self.local_settings, warn)
        rules = permission_setup.build_rule_set(found, self.settings, self.permissions.home, warn)
        self.permissions.rules = rules

    def save_rule(self, text: str, behaviour: Behaviour = "allow") -> Rule:
        """Add a rule to the local settings file and to this session's rules. Raises RuleError
        (it does not parse) or SettingsFileError (the file cannot be changed), one line each."""
        rule = parse_rule(RuleEntry(text, behaviour, self.local_settings.shown, self.local_settings.root),
                          self.permissions.home)  # fmt: skip
        self.local_settings.add_rule(text, behaviour)
        return rule


def build_session(
    settings: Settings, *, sink: EventSink, ask: AskCallback | None, present_plan: PlanPresenter | None = None
) -> Session:
    """`sink` hears every event, start-up warnings included (each once, from any thread); `ask`
    answers permission questions and `present_plan` plans (None: no one can)."""
    project_dir = Path(settings.project_dir).resolve()
    warn = WarningsOnce(sink)
    store = MemoryStore(settings.memory_dir)
    llm = ModelClient(settings, on_retry=sink)
    local_settings = LocalSettings(memory_project_root(project_dir))
    found = _permission_settings(settings, local_settings, warn)
    home = Path.home()
    permissions = Permissions(
        project_dir,
        mode=permission_setup.starting_mode(found, settings, warn),
        ask=ask,
        memory_dir=store.root,
        protected_dirs=protected_dirs(),
        home=home,
        rules=permission_setup.build_rule_set(found, settings, home, warn),
        warn=warn,
    )
    # The weekly tidy hint is for someone who can run /memory tidy: not for print mode.
    hint = (lambda line: sink(Notice(line, "info"))) if ask is not None and llm.configured else None
    memory_startup = MemoryStartup(store, warn, hint=hint)
    recall = MemoryRecall(store, llm, on_recalled=RecallHistory(store.root).record_in_background)
    first_transcript = TranscriptWriter(
        settings.sessions_dir, cwd=project_dir, project=memory_project_root(project_dir),
        model=settings.model, warn=warn,
    )  # fmt: skip
    transcript = TranscriptRecorder(first_transcript)
    agent = Agent(
        llm=llm,
        tools=default_registry(),
        tool_context=ToolContext(
            project_dir,
            permissions,
            MemoryStoreWriter(store),
            plans_dir=Path(settings.sessions_dir).parent / PLANS_FOLDER,
            present_plan=present_plan,
        ),
        sink=_both(transcript, sink),
        build_system_prompt=SystemPrompt(project_dir, store, ready=memory_startup.wait, warn=warn),
        model=settings.model,
        max_tokens=settings.max_tokens,
        max_turns=settings.max_turns,
        recall=recall,
        context_window=settings.context_window,
        turn_reminders=ModeReminders(permissions),
    )
    session = Session(
        settings, llm, permissions, store, memory_startup, recall, agent, transcript, local_settings
    )
    permissions.save_rule = session.save_rule
    return session


def _permission_settings(
    settings: Settings, local: LocalSettings, warn: permission_setup.Warn
) -> permission_setup.PermissionSettings:
    """Where the rules come from, most general first: the local settings file, then the flags.
    (The settings loader goes here: its user and project files before these.)"""
    return permission_setup.combined(
        permission_setup.from_local_file(local, warn),
        permission_setup.from_flags(settings, Path(settings.project_dir).resolve()),
    )


def _both(first: EventSink, then: EventSink) -> EventSink:
    """The transcript hears each event before the UI (whose handling a Ctrl+C may cut short)."""

    def sink(event: Event) -> None:
        first(event)
        then(event)

    return sink
