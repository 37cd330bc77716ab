"""Running the hooks of one event: those whose matcher selects it (each command once), all at
once, each with its own timeout; what they said read into one `Outcome`. The event goes to each
on stdin as JSON with Claude Code's field names (the caller builds it); the environment carries
CLAUDE_PROJECT_DIR and MINI_CLAUDE_PROJECT_DIR, the folder mini-claude works on."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mini_claude.core.config_sources import HookSpec
from mini_claude.extensions.hooks.matching import MATCHED_EVENTS, matches
from mini_claude.extensions.hooks.outcome import Outcome
from mini_claude.extensions.hooks.process import HookProcesses, HookRun

PROJECT_DIR_VARIABLES = ("CLAUDE_PROJECT_DIR", "MINI_CLAUDE_PROJECT_DIR")
JOIN_POLL_S = 0.05  # how often a wait for hooks lets a Ctrl+C land

log = logging.getLogger("mini_claude")


class HookRunner:
    def __init__(self, specs: Sequence[HookSpec], project_dir: Path) -> None:
        self.specs = tuple(specs)
        self.project_dir = project_dir
        self.processes = HookProcesses()

    def selected(self, event: str, value: str | None = None) -> list[HookSpec]:
        """The hooks that run for `event` (for `value`: a tool, a source, a trigger…), each
        command once: two entries naming the same command run it once, as in Claude Code."""
        kind = MATCHED_EVENTS.get(event)
        chosen = [
            spec
            for spec in self.specs
            if spec.event == event
            and (kind is None or value is None or matches(spec.matcher, value, tool=kind == "tool"))
        ]
        unique: dict[str, HookSpec] = {}
        for spec in chosen:
            unique.setdefault(spec.command, spec)
        return list(unique.values())

    def run(self, event: str, payload: dict[str, Any], value: str | None = None) -> Outcome:
        """Run the hooks `event` selects with `payload` on stdin and wait for them all (their
        timeouts bound the wait); KeyboardInterrupt stops them and is raised."""
        outcome = Outcome()
        specs = self.selected(event, value)
        if not specs:
            return outcome
        data = json.dumps(payload, ensure_ascii=True).encode("ascii")  # no byte a decoder can refuse
        env = {**os.environ, **dict.fromkeys(PROJECT_DIR_VARIABLES, str(self.project_dir))}
        runs: list[HookRun] = [HookRun(None, "", "", error="it did not run")] * len(specs)
        batch: set[subprocess.Popen[bytes]] = set()

        def run_one(index: int) -> None:
            try:
                spec = specs[index]
                runs[index] = self.processes.run(
                    spec.command, data, self.project_dir, env, spec.timeout, batch
                )
            except Exception as error:  # a bug of ours: the hook counts as failed, nothing more
                log.exception("running a hook")
                runs[index] = HookRun(None, "", "", error=f"internal error: {type(error).__name__}")

        threads = [
            threading.Thread(target=run_one, args=(index,), name=f"hook-{event}", daemon=True)
            for index in range(len(specs))
        ]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(JOIN_POLL_S)
        except BaseException:
            self.processes.kill(batch)
            raise
        for spec, run in zip(specs, runs, strict=True):
            outcome.add(spec, run)
        return outcome

    def close(self) -> None:
        """The session ends: every hook still running is stopped, and none starts again."""
        self.processes.close()
