"""Running several pieces of work at once (a reply's read-only calls, its sub-agents) while the
thread that started them stays the one that talks to the user: a permission question or a line
for the screen asked for by a worker is handed to it, and it asks or shows them one at a time.
Esc or Ctrl+C on it stops every worker (core/interrupts.py), and it returns only once all are done.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TypeVar

from mini_claude.core.env_values import env_number
from mini_claude.core.interrupts import stop_event, stop_if_requested, stoppable_by
from mini_claude.safety.permissions import Answer, AskCallback, PermissionRequest

T = TypeVar("T")

MAX_SIDE_BY_SIDE = 4  # workers at once; MINI_CLAUDE_PARALLEL_TOOLS=1 runs them one at a time
WAIT_STEP_S = 0.05  # how often the waiting thread looks at its mailbox and at the workers
# Who a worker works for: its sub-agent's name (a question says whose it is), and the mailbox of
# the thread that talks to the user.
_label: contextvars.ContextVar[str | None] = contextvars.ContextVar("agent_label", default=None)
_mailbox: contextvars.ContextVar[_Mailbox | None] = contextvars.ContextVar("mailbox", default=None)


class _Mailbox:
    """Work for the thread that talks to the user, handed in by its workers."""

    def __init__(self) -> None:
        self.owner = threading.current_thread()
        self._items: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any] | None]] = queue.SimpleQueue()

    def hand_in(self, work: Callable[[], T], *, wait_for_it: bool) -> T | None:
        done: Future[T] | None = Future() if wait_for_it else None
        self._items.put((work, done))
        if done is None:
            return None
        while True:
            try:
                return done.result(timeout=WAIT_STEP_S)
            except TimeoutError:
                stop_if_requested()

    def serve(self, timeout: float) -> None:
        """Do what was handed in, waiting at most `timeout` for the first."""
        try:
            work, done = self._items.get(timeout=timeout)
        except queue.Empty:
            return
        while True:
            if done is None:
                work()
            elif done.set_running_or_notify_cancel():
                try:
                    done.set_result(work())
                except BaseException as error:  # the worker raises it (KeyboardInterrupt: it stops)
                    done.set_exception(error)
                    if not isinstance(error, Exception):
                        raise
            try:
                work, done = self._items.get_nowait()
            except queue.Empty:
                return

    def refuse_waiting(self) -> None:
        """Once stopped: what a worker waits for is not done (it stops); a line for the screen
        still shows (how each sub-agent ended)."""
        while True:
            try:
                work, done = self._items.get_nowait()
            except queue.Empty:
                return
            if done is not None:
                done.set_exception(KeyboardInterrupt())
            else:
                work()


def workers_at_once() -> int:
    """MINI_CLAUDE_PARALLEL_TOOLS (1: one at a time), at most MAX_SIDE_BY_SIDE."""
    return max(1, min(MAX_SIDE_BY_SIDE, int(env_number("MINI_CLAUDE_PARALLEL_TOOLS", MAX_SIDE_BY_SIDE, int))))


def run_side_by_side(works: Sequence[Callable[[], T]], on_done: Callable[[int, T], None]) -> None:
    """Run `works` on up to `workers_at_once()` threads; `on_done(index, result)` on this thread
    as each ends. A KeyboardInterrupt (here, or in a worker) stops them all; it is raised once
    none runs any more."""
    box = _mailbox.get()
    if box is None or box.owner is threading.current_thread():
        box = _Mailbox()
    serving = box.owner is threading.current_thread()
    stop = stop_event() or threading.Event()

    def in_scope(work: Callable[[], T]) -> T:
        _mailbox.set(box)
        with stoppable_by(stop):
            return work()

    pool = ThreadPoolExecutor(
        max_workers=min(workers_at_once(), len(works)), thread_name_prefix="side-by-side"
    )
    futures = {pool.submit(contextvars.copy_context().run, in_scope, work): i for i, work in enumerate(works)}
    for future in futures:  # a call that ends wakes the waiting thread at once
        future.add_done_callback(lambda _: box.hand_in(lambda: None, wait_for_it=False))
    pending = set(futures)
    try:
        while pending:
            if serving:
                box.serve(WAIT_STEP_S)
            done, pending = wait(pending, timeout=0 if serving else WAIT_STEP_S, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=futures.__getitem__):
                on_done(futures[future], future.result())  # a worker's KeyboardInterrupt: all stop
            stop_if_requested()
        if serving:
            box.serve(0)  # what the last of them handed in
    except BaseException:
        stop.set()
        _wind_down(pool, box if serving else None, set(futures))
        raise
    pool.shutdown()


def _wind_down(pool: ThreadPoolExecutor, box: _Mailbox | None, futures: set[Future[Any]]) -> None:
    """Until no worker runs: each notices the stop at its next check; a second Ctrl+C meanwhile
    does not leave one running."""
    pending = futures
    while pending:
        try:
            if box is not None:
                box.refuse_waiting()
            _, pending = wait(pending, timeout=WAIT_STEP_S)
        except KeyboardInterrupt:
            continue
    pool.shutdown()
    if box is not None:
        box.refuse_waiting()  # what the last of them handed in


def on_talking_thread(work: Callable[[], T]) -> T:
    """`work()` on the thread that talks to the user: here, when this is it (or no one works
    side by side); else handed to it, waiting for its answer."""
    box = _mailbox.get()
    if box is None or box.owner is threading.current_thread():
        return work()
    result = box.hand_in(work, wait_for_it=True)
    return result  # type: ignore[return-value]


def show_on_talking_thread(show: Callable[[], None]) -> None:
    """`show()` there too, without waiting for it (a line for the screen)."""
    box = _mailbox.get()
    if box is None or box.owner is threading.current_thread():
        show()
    else:
        box.hand_in(show, wait_for_it=False)


@contextmanager
def working_for(label: str) -> Iterator[None]:
    """Within the block, this thread works for the sub-agent `label`: its questions say so."""
    token = _label.set(label)
    try:
        yield
    finally:
        _label.reset(token)


def relayed(ask: AskCallback | None) -> AskCallback | None:
    """The permission question, asked by the thread that talks to the user whichever thread
    needs it (so questions never interleave), labelled with the sub-agent that asks."""
    if ask is None:
        return None
    asked: AskCallback = ask

    def ask_there(request: PermissionRequest) -> Answer:
        label = _label.get()
        labelled = request if label is None else replace(request, agent=label)
        return on_talking_thread(lambda: asked(labelled))

    return ask_there
