"""Holding Ctrl+C back for the few lines that must finish to keep the conversation valid."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sigint_deferred() -> Iterator[None]:
    """Delay SIGINT until the block ends; then raise it, unless an interrupt is already unwinding."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    unwinding_interrupt = False
    try:
        yield
    except KeyboardInterrupt:
        unwinding_interrupt = True
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
        if received and not unwinding_interrupt:
            raise KeyboardInterrupt
