"""The memory folders' once-a-session work, done off the start-up path: whose memories the project
folder holds is settled (memory/identity.py: another repository at the path gets none of them),
temp files a killed writer left are removed, a change set a crash left half-applied is finished or
reverted (one line says which) and hand edits are indexed, in every scope, while the user types
the first message; then, when someone is there to read it, the weekly tidy hint (memory/tidy/hint.py)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from mini_claude.core import prompts
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files.private_files import foreign_level
from mini_claude.memory import identity
from mini_claude.memory.scopes import MemoryScopes
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.tidy.hint import weekly_hint

log = logging.getLogger("mini_claude")

MEMORY_STARTUP_WAIT = 30.0  # seconds the first system prompt waits for it, at most


class MemoryStartup:
    """`start()` runs `store.startup()` on a thread; `wait()` is what the first system prompt
    calls (it runs the work itself when nothing started it). A failure or a recovered change set
    is told through `warn`, the tidy hint (if any is due) through `hint`."""

    def __init__(
        self,
        memories: MemoryScopes | MemoryStore,
        warn: Callable[[str], None],
        *,
        hint: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.memories = MemoryScopes.of(memories)
        self.store = self.memories.project
        self.warn = warn
        self.hint = hint
        self.clock = clock
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._indexed = threading.Event()  # the start-up proper is over (the hint may still run)

    def start(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="memory-startup", daemon=True)
                self._thread.start()

    def wait(self) -> None:
        self.start()
        self._indexed.wait(MEMORY_STARTUP_WAIT)

    def _run(self) -> None:
        started = time.perf_counter()
        try:
            self._settle()
            log.debug("memory start-up done in %.2f s", time.perf_counter() - started)
        finally:
            self._indexed.set()
        if self.hint is not None and self.store.root_problem() is None:
            try:
                line = weekly_hint(self.store, self.clock())
            except Exception as error:  # a hint is never worth a broken start-up
                log.warning("tidy hint skipped: %s: %s", type(error).__name__, error)
                return
            if line is not None:
                self.hint(line)

    def _settle(self) -> None:
        memories = self.memories
        if memories.project_root is not None and (line := identity.settle(self.store, memories.project_root)):
            log.warning("%s", line)
            self.warn(line)
        team = memories.team if memories.team_loaded() else None
        if memories.team is not None and memories.team_trusted and (problem := memories.team_problem()):
            log.warning("%s", problem)
            self.warn(problem)
        said: set[str] = set()  # a folder above two of them someone else's (~/.mini-claude): said once
        for store in (s for s in (self.store, team, memories.user) if s is not None and s.withheld is None):
            try:
                recovered = store.startup()
            except (MemoryStoreError, OSError) as error:
                log.warning("memory startup failed: %s", error)
                foreign = foreign_level(store.root)
                if foreign is None or foreign not in said:
                    self.warn(f"Memory index not refreshed: {error}")
                if foreign is not None:
                    said.add(foreign)
                continue
            for line in recovered:
                log.warning("%s", line)
                self.warn(line)
        if unloaded := memories.unloaded_team_memories():
            assert memories.team is not None
            self.warn(prompts.notice("memory_team_untrusted", count=unloaded, folder=memories.team.root))
