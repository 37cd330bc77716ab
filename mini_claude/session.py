"""Wiring one session together: model client, tools, permissions, memory, agent.

The REPL and print mode are two thin front ends over what `build_session` returns.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mini_claude.agent import Agent
from mini_claude.config import Settings, protected_dirs
from mini_claude.events import EventSink, Notice
from mini_claude.llm import ModelClient
from mini_claude.memory.gate import MemoryWrites
from mini_claude.memory.naming import INDEX_FILE
from mini_claude.memory.prefetch import MemoryPrefetch
from mini_claude.memory.section import memory_section
from mini_claude.memory.store import MemoryStore, MemoryStoreError
from mini_claude.permissions import AskCallback, Permissions
from mini_claude.prepared_prompt import PreparedPrompt
from mini_claude.system_prompt import PROJECT_INSTRUCTIONS_FILE, build_system_prompt
from mini_claude.tools.base import ToolContext
from mini_claude.tools.registry import default_registry

log = logging.getLogger("mini_claude")

MEMORY_STARTUP_WAIT = 30.0  # seconds the first model call waits for the startup re-index, at most


class MemoryStartup:
    """Re-index the memory dir once per session (hand edits show up), off the start-up path;
    then, on the same thread, `then` (which builds the system prompt ahead)."""

    def __init__(self, store: MemoryStore, then: Callable[[], None] = lambda: None) -> None:
        self.store = store
        self.failed = False
        # One-line warnings for the user: start-up's own, and those of files read at start-up
        # (CLAUDE.md, MEMORY.md); each distinct one is told once per session.
        self._warnings: list[str] = []
        self._told: set[str] = set()
        self._then = then
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._take_lock = threading.Lock()  # the REPL's loop, the first model call, the start-up thread

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run_then, name="memory-startup", daemon=True)
            self._thread.start()

    def warn(self, text: str) -> None:
        with self._take_lock:
            if text not in self._told:
                self._told.add(text)
                self._warnings.append(text)

    def take_warnings(self) -> list[str]:
        """The warnings not handed out yet, each handed out once."""
        with self._take_lock:
            warnings, self._warnings = self._warnings, []
            return warnings

    def wait(self) -> None:
        if self._thread is None:
            self._run()
        self._done.wait(MEMORY_STARTUP_WAIT)

    def _run(self) -> None:
        started = time.perf_counter()
        try:
            self.store.startup()
            log.debug("memory start-up done in %.2f s", time.perf_counter() - started)
        except (MemoryStoreError, OSError) as error:
            self.failed = True
            self.warn(f"Memory index not refreshed: {error}")
            log.warning("memory startup failed: %s", error)
        finally:
            self._done.set()

    def _run_then(self) -> None:
        self._run()
        if not self.failed:
            try:
                self._then()
            except Exception as error:  # only work done ahead: the first message does it again
                log.warning("preparing the system prompt failed: %s", error)


@dataclass
class Session:
    settings: Settings
    llm: ModelClient
    permissions: Permissions
    store: MemoryStore
    memory_startup: MemoryStartup
    recall: MemoryPrefetch
    agent: Agent

    def warm_up(self) -> None:
        """Start what the first message needs (memory re-index, SDK import) without waiting."""
        self.memory_startup.start()
        self.llm.preload()
        self.recall.prepare()


def build_session(settings: Settings, *, sink: EventSink, ask: AskCallback | None) -> Session:
    project_dir = Path(settings.project_dir).resolve()
    store = MemoryStore(settings.memory_dir)
    llm = ModelClient(settings)
    permissions = Permissions(
        project_dir,
        mode=settings.permission_mode,
        ask=ask,
        memory_dir=store.root,
        protected_dirs=protected_dirs(),
    )
    recall = MemoryPrefetch(store, llm)

    def system_prompt() -> str:
        startup.wait()
        return build_system_prompt(project_dir, memory_section(store), warn=startup.warn)

    sources = (store.root, store.root / INDEX_FILE, project_dir / PROJECT_INSTRUCTIONS_FILE)
    prepared_prompt = PreparedPrompt(system_prompt, sources)
    startup = MemoryStartup(store, then=prepared_prompt.prepare)

    def system_prompt_telling_warnings() -> str:
        text = prepared_prompt()  # built ahead on the start-up thread, or now: warnings wait till here
        for warning in startup.take_warnings():
            sink(Notice(warning, "warning"))
        return text

    agent = Agent(
        llm=llm,
        tools=default_registry(),
        tool_context=ToolContext(project_dir, permissions, MemoryWrites(store)),
        sink=sink,
        build_system_prompt=system_prompt_telling_warnings,
        model=settings.model,
        max_tokens=settings.max_tokens,
        max_turns=settings.max_turns,
        recall=recall,
    )
    return Session(settings, llm, permissions, store, startup, recall, agent)
