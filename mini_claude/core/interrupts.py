"""Holding Ctrl+C back for the few lines that must finish to keep the conversation valid;
SIGTERM or SIGHUP (the terminal closed) during a turn ending it as Ctrl+C does, so the reply
streamed so far is kept, before the program exits; and work on other threads (a reply's tool calls
side by side, sub-agents) stopping as Ctrl+C stops the main thread, at its next check."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

TERMINATING = (signal.SIGTERM, signal.SIGHUP)
# Main-thread state (signal handlers only run there): the termination received during the turn,
# and how many sigint_deferred blocks hold interrupts back now.
_terminated: list[int] = []
_deferring = [0]
# Set for the threads working for a stoppable piece of work (agent/side_by_side.py): once the
# event is set, their next check raises KeyboardInterrupt, as Ctrl+C does on the main thread.
_stop: ContextVar[threading.Event | None] = ContextVar("stop", default=None)


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived during a turn, which ended as after Ctrl+C: the program exits.
    A BaseException, so no handler of Ctrl+C or of errors on the way out takes it for one."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"ended by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum  # what a shell reports for a process the signal ended: 143, 129


class _TurnCut(KeyboardInterrupt):
    """Raised inside the turn for a termination: the turn unwinds as for Ctrl+C."""


@contextmanager
def sigint_deferred() -> Iterator[None]:
    """Delay SIGINT (and a termination, during a turn) until the block ends; then raise it,
    unless an interrupt is already unwinding."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    terminated_before = bool(_terminated)
    _deferring[0] += 1
    unwinding_interrupt = False
    try:
        yield
    except KeyboardInterrupt:
        unwinding_interrupt = True
        raise
    finally:
        _deferring[0] -= 1
        signal.signal(signal.SIGINT, previous)
        if not unwinding_interrupt and _terminated and not terminated_before:
            raise _TurnCut
        if received and not unwinding_interrupt:
            raise KeyboardInterrupt


@contextmanager
def terminations_end_the_turn() -> Iterator[None]:
    """During the block (a turn), SIGTERM and SIGHUP raise KeyboardInterrupt, so the turn ends
    as for Ctrl+C with what it has kept; once the block is over, Terminated is raised. SIGHUP
    also points stdin, stdout and stderr at /dev/null first: the terminal is gone, and writing
    to it would fail on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _on_termination) for signum in TERMINATING}
    try:
        yield
    except _TurnCut:
        pass  # raised again as Terminated below
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        if signal.SIGHUP in _terminated:  # the terminal is gone: its last hang-up must not cut the exit short
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
    if _terminated:
        raise Terminated(_terminated.pop())


def _on_termination(signum: int, frame: Any) -> None:
    if signum == signal.SIGHUP:
        _detach_from_terminal()
    if _terminated:
        return  # the first one is being handled
    _terminated.append(signum)
    if not _deferring[0]:
        raise _TurnCut


def _detach_from_terminal() -> None:
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)


def stop_event() -> threading.Event | None:
    """The event that stops the work this thread does for someone else, or None (the main thread's
    own work, which Ctrl+C stops)."""
    return _stop.get()


def stop_if_requested() -> None:
    """KeyboardInterrupt once the work this thread does was asked to stop (Esc, Ctrl+C on the
    main thread): the thread's own handling of Ctrl+C (a command's process group killed, a
    turn's calls answered) then runs as it would on the main thread."""
    event = _stop.get()
    if event is not None and event.is_set():
        raise KeyboardInterrupt


@contextmanager
def stoppable_by(event: threading.Event) -> Iterator[None]:
    """Within the block, this thread's checks (`stop_if_requested`) answer to `event`."""
    token = _stop.set(event)
    try:
        yield
    finally:
        _stop.reset(token)
