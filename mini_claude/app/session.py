"""Wiring one session together: model client, tools, permissions, memory, agent.

The REPL and print mode are two thin front ends over what `build_session` returns. Nothing here
decides anything: each part owns its own rules.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mini_claude.agent.loop import Agent
from mini_claude.agent.side_by_side import relayed
from mini_claude.agent.spend_cap import SpendCap
from mini_claude.app.extension_setup import Extensions, add_skill_tool, build_extensions, hook_mode, notifying
from mini_claude.app.instructions.hierarchy import InstructionSet, project_places
from mini_claude.app.instructions.local_file import unignored_local_file
from mini_claude.app.instructions.reminders import InstructionReminders
from mini_claude.app.mcp.servers import AskServer, SessionServers
from mini_claude.app.mode_reminders import ModeReminders
from mini_claude.app.permission_setup import build_rule_set
from mini_claude.app.settings.local_rules import LOCAL_RULES_FILE, LocalRules
from mini_claude.app.subagent_setup import add_agent_tool
from mini_claude.app.system_prompt import PromptOptions, SystemPrompt
from mini_claude.core.config import Settings, memory_project_root, protected_dirs
from mini_claude.core.events import ContextCompacted, Event, EventSink, Notice, TurnEnded, WarningsOnce
from mini_claude.llm.client import ModelClient
from mini_claude.memory.project_record import remember_project
from mini_claude.memory.recall.memory_recall import MemoryRecall
from mini_claude.memory.scopes import MemoryScopes
from mini_claude.memory.startup import MemoryStartup
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.safety.permissions import AskCallback, Permissions
from mini_claude.safety.rules import Behaviour, RuleEntry, parse_rule
from mini_claude.sessions.recorder import TranscriptRecorder
from mini_claude.sessions.transcript.writer import TranscriptWriter
from mini_claude.tools.base import ToolContext
from mini_claude.tools.memory_writer import MemoryStoreWriter
from mini_claude.tools.plan import PLANS_FOLDER, PlanPresenter
from mini_claude.tools.registry import default_registry

PRELOAD_WAIT_S = 10.0  # MCP servers wait at most this long for the SDK's import before connecting


@dataclass(frozen=True)
class SavedRule:
    added: bool  # False: the file had it already
    unignored: Path | None  # the work tree's root, when this save made a file git does not ignore


@dataclass
class Session:
    settings: Settings
    llm: ModelClient
    permissions: Permissions
    store: MemoryStore  # this project's memories (memories.project)
    memories: MemoryScopes  # every scope's
    memory_startup: MemoryStartup
    recall: MemoryRecall
    agent: Agent
    transcript: TranscriptRecorder
    system_prompt: SystemPrompt
    extensions: Extensions
    local_rules: LocalRules  # where "always" answers and /permissions save rules
    mcp: SessionServers
    warn: Callable[[str], None] = field(default=lambda _: None, repr=False)
    _warmed_up: bool = field(default=False, init=False, repr=False)

    def warm_up(self) -> None:
        """Start what the first message needs (memory start-up: whose project folder this is, the
        re-index; the SDK import) without waiting; and, once: tell what the settings files could
        not give, and, the session in use being known (a resumed one is chosen first), remove old
        transcripts. Without automatic memory, the project folder still says whose it is."""
        if self.settings.memory_enabled:
            self.memory_startup.start()
        self.llm.preload()
        if not self._warmed_up:
            self._warmed_up = True
            # After the SDK's import: two imports at once would slow the prompt (one CPU of 2).
            self.mcp.start(first=lambda: self.llm.wait_preloaded(PRELOAD_WAIT_S))
            for note in [*self.settings.notes, *self.extensions.startup_lines()]:
                self.warn(note)
            self.extensions.start("startup")
            if not self.settings.memory_enabled:
                remember_project(self.settings)
            self.transcript.remove_expired_in_background(self.settings.session_retention_days)

    def instructions(self) -> InstructionSet:
        """The instruction files of the current conversation (or of the next, before the first)."""
        return self.system_prompt.instructions()

    def new_conversation(self) -> None:
        """/clear: a new conversation, saved in a new transcript (the old one stays)."""
        self.extensions.hooks.session_ended("clear")
        self.agent.clear()
        self.permissions.new_conversation()
        self.transcript.start_new()
        self.extensions.start("clear")

    def end(self, reason: str) -> None:
        """The session is over (`prompt_input_exit`: the user left the REPL; `other`): the
        SessionEnd hooks run, no hook nor MCP server outlives it, the transcript is closed."""
        try:
            self.extensions.hooks.close(reason)
        finally:
            try:
                self.mcp.close()
            finally:
                self.transcript.close()

    def close(self) -> None:
        """The session ends for another reason than the user leaving (print mode, a test)."""
        self.end("other")

    def save_rule(self, text: str, behaviour: Behaviour = "allow") -> SavedRule:
        """Add a rule to the local settings file and to this session's rules. Raises RuleError (it
        does not parse) or SettingsFileError (the file cannot be changed), one line each. A line
        says when a later session will not use it: allow rules there need a trusted folder."""
        local = self.local_rules
        rule = parse_rule(RuleEntry(text, behaviour, local.shown, local.root), self.permissions.home)
        new_file = not os.path.lexists(local.path)
        added = local.add_rule(text, behaviour)
        self.permissions.add_rule(rule)
        if behaviour == "allow" and not self.settings.folder_trusted:
            self.warn(
                f"{local.shown}: its allow rules apply in later sessions only once you trust this "
                "folder (the next start here asks, unless you said no before)"
            )
        unignored = unignored_local_file(local.root, LOCAL_RULES_FILE) if new_file else None
        return SavedRule(added, unignored)

    def save_always(self, text: str) -> None:
        """An "always" answer's rule (Permissions.save_rule): saved, and, when that made a file git
        would commit, a line saying so (Claude Code keeps its own out of git)."""
        if self.save_rule(text).unignored is not None:
            self.warn(f"{self.local_rules.shown} holds your own permission rules: add it to .gitignore")

    def remove_rule(self, text: str) -> list[Behaviour]:
        """Remove a rule from the local settings file and this session's rules; the lists it was in."""
        removed = self.local_rules.remove_rule(text)
        self.permissions.remove_rule(text, self.local_rules.shown)
        return removed


def build_session(
    settings: Settings, *, sink: EventSink, ask: AskCallback | None,
    present_plan: PlanPresenter | None = None, ask_server: AskServer | None = None, print_mode: bool = False,
) -> Session:  # fmt: skip
    """`sink` hears every event, start-up warnings included (each once, from any thread); `ask`
    answers permission questions, `present_plan` plans (None: no one can) and `ask_server`
    whether each project MCP server not approved yet may start (the REPL's question); `print_mode`:
    the transcript says so (the session list marks such sessions). The team's memories in the
    repository are loaded only in a trusted folder (`folder_trusted`), and the project's settings
    files allow tools only there (the settings loader leaves their allow rules out)."""
    project_dir = Path(settings.project_dir).resolve()
    warn = WarningsOnce(sink)
    memories = MemoryScopes.for_settings(settings)
    store = memories.project
    llm = ModelClient(settings, on_retry=sink)
    remembers = settings.memory_enabled  # off: no index, no recall, no saves by the model
    first_transcript = TranscriptWriter(
        settings.sessions_dir, cwd=project_dir, project=memory_project_root(project_dir),
        model=settings.model, warn=warn, print_mode=print_mode,
    )  # fmt: skip
    transcript = TranscriptRecorder(first_transcript)
    root, home = memory_project_root(project_dir), Path.home()
    permissions = Permissions(
        project_dir,
        mode=settings.permission_mode,
        ask=None,  # below: the question tells the Notification hooks
        memory_dir=store.root if remembers else None,
        protected_dirs=protected_dirs(),
        home=home,
        rules=build_rule_set(settings, root, home, warn),
        warn=warn,
        more_memory_dirs=[settings.user_memory_dir] if remembers else [],
        additional_dirs=settings.additional_dirs,
    )
    extensions = build_extensions(settings, sink=sink, permissions=permissions)
    permissions.ask = relayed(notifying(extensions, ask))  # asked by the turn's thread, whoever asks

    def hook_fields() -> dict[str, Any]:  # what every hook is told, as of the moment it runs
        return {
            "session_id": transcript.session_id, "transcript_path": str(transcript.writer.path),
            "cwd": str(project_dir), "permission_mode": hook_mode(permissions.mode),
        }  # fmt: skip

    extensions.hooks.info = hook_fields
    # The weekly tidy hint is for someone who can run /memory tidy: not for print mode.
    hint = (lambda line: sink(Notice(line, "info"))) if ask is not None and llm.configured else None
    memory_startup = MemoryStartup(memories, warn, hint=hint)
    memory_on = settings.memory_mode != "off"
    recall = MemoryRecall(
        memories, llm, on_recalled=memories.record_recalled, ready=memory_startup.wait, enabled=memory_on
    )
    reminders = InstructionReminders(project_dir, project_places(project_dir), warn)
    tool_context = ToolContext(
        project_dir, permissions, tool_used=reminders.tool_used,
        plans_dir=Path(settings.sessions_dir).parent / PLANS_FOLDER, present_plan=present_plan,
        before_change=transcript.before_change, side_model=llm,
    )  # fmt: skip
    # Kept when memory is off: a model's write into a memory folder is refused with a line saying why.
    tool_context.memory_writer = MemoryStoreWriter(
        memories,
        permissions,
        mode=settings.memory_mode,
        session_id=lambda: transcript.session_id,
        files_read=tool_context.files_read,
    )
    options = PromptOptions(
        remembers, settings.additional_dirs, settings.system_prompt, settings.append_system_prompt
    )
    ready = memory_startup.wait if remembers else lambda: None
    system_prompt = SystemPrompt(
        project_dir, memories, ready=ready, warn=warn, options=options, reminders=reminders,
        skills=extensions.telling.section,
    )  # fmt: skip
    tools = default_registry()
    add_skill_tool(tools, extensions)
    servers = SessionServers(settings, tools, sink, ask=ask_server)
    spend_cap = SpendCap(settings.max_cost, llm)  # sub-agents' calls count, and are held to it
    add_agent_tool(
        tools, settings, llm=llm, tool_context=tool_context, hooks=extensions.hooks, sink=sink,
        memories=memories, transcript=transcript, warn=warn, spend_cap=spend_cap,
        model=lambda: agent.model,  # /model changes it for the sub-agents that inherit it too
    )  # fmt: skip
    agent = Agent(
        llm=llm,
        tools=tools,
        tool_context=tool_context,
        sink=_agent_sink(sink, tool_context.files_read, extensions),
        save=transcript,
        build_system_prompt=system_prompt,
        model=settings.model,
        max_tokens=settings.max_tokens,
        max_turns=settings.max_turns,
        recall=recall if remembers else None,
        context_window=settings.context_window,
        reminders=lambda: [*reminders.take(), *extensions.telling.reminder()],
        turn_reminders=ModeReminders(permissions),
        thinking=settings.thinking_budget,
        spend_cap=spend_cap,
        hooks=extensions.hooks,
        max_tool_calls=settings.max_tool_calls,
    )
    session = Session(
        settings, llm, permissions, store, memories, memory_startup, recall, agent, transcript,
        system_prompt, extensions, LocalRules(root), servers, warn,
    )  # fmt: skip
    permissions.save_rule = session.save_always
    return session


def _agent_sink(sink: EventSink, files_read: list[str], extensions: Extensions) -> EventSink:
    """`sink`, then: the files read in a turn forgotten once it ends (a memory saved in the next
    one records only that turn's; an @-mention's read comes before its turn, and counts for it);
    and a summary made, SessionStart hooks hear `compact`."""

    def after(event: Event) -> None:
        sink(event)
        if isinstance(event, TurnEnded):
            files_read.clear()
        elif isinstance(event, ContextCompacted):
            extensions.start("compact")

    return after
