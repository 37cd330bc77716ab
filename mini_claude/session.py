"""Wiring one session together: model client, tools, permissions, memory, agent.

The REPL and print mode are two thin front ends over what `build_session` returns. Nothing here
decides anything: each part owns its own rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mini_claude.agent import Agent
from mini_claude.config import Settings, protected_dirs
from mini_claude.events import EventSink, WarningsOnce
from mini_claude.llm import ModelClient
from mini_claude.memory.recall import MemoryRecall
from mini_claude.memory.startup import MemoryStartup
from mini_claude.memory.store import MemoryStore
from mini_claude.memory.writer import MemoryStoreWriter
from mini_claude.permissions import AskCallback, Permissions
from mini_claude.system_prompt import SystemPrompt
from mini_claude.tools.base import ToolContext
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

    def warm_up(self) -> None:
        """Start what the first message needs (memory re-index, SDK import) without waiting."""
        self.memory_startup.start()
        self.llm.preload()


def build_session(settings: Settings, *, sink: EventSink, ask: AskCallback | None) -> Session:
    """`sink` hears every event, start-up warnings included (each once, from any thread)."""
    project_dir = Path(settings.project_dir).resolve()
    warn = WarningsOnce(sink)
    store = MemoryStore(settings.memory_dir)
    llm = ModelClient(settings)
    permissions = Permissions(
        project_dir,
        mode=settings.permission_mode,
        ask=ask,
        memory_dir=store.root,
        protected_dirs=protected_dirs(),
    )
    memory_startup = MemoryStartup(store, warn)
    recall = MemoryRecall(store, llm)
    agent = Agent(
        llm=llm,
        tools=default_registry(),
        tool_context=ToolContext(project_dir, permissions, MemoryStoreWriter(store)),
        sink=sink,
        build_system_prompt=SystemPrompt(project_dir, store, ready=memory_startup.wait, warn=warn),
        model=settings.model,
        max_tokens=settings.max_tokens,
        max_turns=settings.max_turns,
        recall=recall,
    )
    return Session(settings, llm, permissions, store, memory_startup, recall, agent)
