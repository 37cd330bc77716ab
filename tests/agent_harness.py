"""Driving a real session (agent, tools, permissions, memory) against the fake API server."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from mini_claude.config import load_settings
from mini_claude.events import Event, TextDelta, ToolFinished, TurnEnded
from mini_claude.permissions import PermissionRequest
from mini_claude.session import Session, build_session
from tests.fake_api import RecordedRequest


@dataclass
class Harness:
    """A session whose events are collected and whose permission questions get scripted answers."""

    answers: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    questions: list[PermissionRequest] = field(default_factory=list)
    on_event: Callable[[Event], None] | None = None
    session: Session = field(init=False)

    def start(self, **settings: Any) -> Harness:
        ask = self._answer if settings.pop("interactive", True) else None
        self.session = build_session(load_settings(**settings), sink=self._collect, ask=ask)
        return self

    def _collect(self, event: Event) -> None:
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def _answer(self, request: PermissionRequest) -> str:
        self.questions.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected permission question: {request}")
        return self.answers.pop(0)

    def turn(self, text: str) -> TurnEnded:
        self.events.clear()
        return self.session.agent.run_turn(text)

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TextDelta))

    def of_type(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def tool_results(self) -> list[ToolFinished]:
        return self.of_type(ToolFinished)


def wait_for_recalls(timeout: float = 5.0) -> bool:
    """Every memory recall running now has finished (each runs on its own "memory-recall" thread)."""
    deadline = time.monotonic() + timeout
    for thread in threading.enumerate():
        if thread.name == "memory-recall":
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return False
    return True


def tool_results_in(request: RecordedRequest) -> list[dict[str, Any]]:
    """The tool_result blocks of the request's last user message."""
    last = request.messages[-1]
    return [b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def interrupt_on(kind: type, nth: int = 1) -> Callable[[Event], None]:
    """An event hook that presses Ctrl+C (raises KeyboardInterrupt) at the nth event of `kind`."""
    seen = 0

    def hook(event: Event) -> None:
        nonlocal seen
        if isinstance(event, kind):
            seen += 1
            if seen == nth:
                raise KeyboardInterrupt

    return hook


@contextmanager
def ctrl_c_after(seconds: float) -> Iterator[None]:
    """Send this process a real SIGINT after `seconds`, as a terminal's Ctrl+C would."""
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
