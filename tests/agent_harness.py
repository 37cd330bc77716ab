"""Driving a real session (agent, tools, permissions, memory) against the fake API server."""

from __future__ import annotations

import inspect
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from mini_claude.app.session import Session, build_session
from mini_claude.app.settings.configure import Flags, configure
from mini_claude.core.config import load_settings
from mini_claude.core.events import Event, TextDelta, ToolFinished, ToolStarted, TurnEnded
from mini_claude.safety.permissions import PermissionRequest
from tests.fake_api import FakeAnthropic, RecordedRequest, text_reply
from tests.kit import main_calls

LOAD_PARAMETERS = set(inspect.signature(load_settings).parameters)


@dataclass
class Harness:
    """A session whose events are collected and whose permission questions get scripted answers."""

    answers: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    questions: list[PermissionRequest] = field(default_factory=list)
    on_event: Callable[[Event], None] | None = None
    session: Session = field(init=False)

    def start(self, **settings: Any) -> Harness:
        """`settings`: what load_settings takes, and Settings fields set over it (`folder_trusted`,
        as configure decides it; `allowed_tools`, …). `files=True`: the settings files read as a
        run reads them (configure), the rest of `settings` being its flags. `configured`: Settings
        to use as they are."""
        ask = self._answer if settings.pop("interactive", True) else None
        configured = settings.pop("configured", None)
        if configured is not None:
            loaded = configured
        elif settings.pop("files", False):
            loaded = configure(Flags(**settings))
        else:
            given = {name: settings.pop(name) for name in list(settings) if name not in LOAD_PARAMETERS}
            loaded = replace(load_settings(**settings), **given)
        self.session = build_session(loaded, sink=self._collect, ask=ask)
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


def wait_for_recalls(timeout: float = 30.0) -> bool:
    """Every memory recall running now has finished (each runs on its own "memory-recall" thread);
    the bound is generous: the first side query of a process imports the SDK, seconds on a busy
    machine."""
    deadline = time.monotonic() + timeout
    for thread in threading.enumerate():
        if thread.name == "memory-recall":
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return False
    return True


def hold_replies_until_recall_settles(request: RecordedRequest) -> None:
    """A fake-server responder: each streamed call waits for the recalls running now (however
    slow their side query thread), so recall lands in the turn; then the queues answer as usual."""
    if request.stream:
        wait_for_recalls()


def talk(harness: Harness, fake: FakeAnthropic, *texts: str) -> None:
    """A turn per text, each answered "answer to <text>"."""
    for text in texts:
        fake.stream_replies.append(text_reply(f"answer to {text}"))
        assert harness.turn(text).reason == "done"


def assert_next_turn_works(harness: Harness, fake: FakeAnthropic) -> None:
    """After a fault, a normal turn succeeds and the fake finds its request a valid conversation."""
    fake.responder = None
    fake.stream_replies.clear()  # whatever the fault left unanswered is not this turn's reply
    fake.stream_replies.append(text_reply("all good now"))
    ended = harness.turn("are you still there?")
    assert ended.reason == "done", harness.events
    assert ended.final_text == "all good now"
    last = main_calls(fake)[-1]
    assert last.validation_error is None
    assert last.messages[-1]["role"] == "user"
    assert "are you still there?" in str(last.messages[-1]["content"])


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
def ctrl_c_once_running(harness: Harness, seconds: float = 0.3) -> Iterator[None]:
    """A real SIGINT `seconds` after the first tool starts running: a delay counted from the turn's
    start loses the race when the first request is slow (alone in a fresh process, or under load)."""
    timers: list[threading.Timer] = []

    def on_event(event: Event) -> None:
        if isinstance(event, ToolStarted) and not timers:
            timers.append(threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT)))
            timers[0].start()

    harness.on_event = on_event
    try:
        yield
    finally:
        for timer in timers:
            timer.cancel()
        harness.on_event = None


@contextmanager
def ctrl_c_after(seconds: float) -> Iterator[None]:
    """Send this process a real SIGINT after `seconds`, as a terminal's Ctrl+C would."""
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
