"""A closed stdout (`mini-claude … | head -1`, `| true`) ends any command quietly: no traceback, no
"Exception ignored … BrokenPipeError" at exit, and the exit status a program killed by SIGPIPE
gets (EXIT_STDOUT_CLOSED), which a pipeline under `set -o pipefail` reports as `yes | head` does."""

from __future__ import annotations

import os
import select
import sys
import threading
from collections.abc import Callable

EXIT_STDOUT_CLOSED = 141  # 128 + SIGPIPE, as shells report a writer whose reader went away


class StdoutClosed(Exception):
    """Raised where output learns that nobody reads it any more (print mode's JSON lines)."""


def stdout_closed_quietly(command: Callable[[], int]) -> int:
    """`command()`'s exit status, or EXIT_STDOUT_CLOSED when stdout was closed under it."""
    try:
        try:
            status = command()
        except SystemExit as done:  # argparse after --help, --version (0) or a usage error (2)
            sys.stdout.flush()
            if done.code in (0, None) and _reader_gone():  # argparse swallows its failed write
                raise StdoutClosed from None
            raise
        sys.stdout.flush()  # now, not at exit, where a failure can only print a warning
        return status
    except (BrokenPipeError, StdoutClosed):
        discard_stdout()
        return EXIT_STDOUT_CLOSED


def _reader_gone() -> bool:
    """Whether stdout is a pipe or socket whose reading end is closed (poll reports an error)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def discard_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered, and whatever prints later (the
    interpreter flushes stdout at exit), goes nowhere instead of failing again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no descriptor (a test's StringIO): nothing to do
        pass


def stop_main_thread() -> None:
    """From a write that found stdout closed: end the run as Ctrl+C would (what was said is saved),
    raising KeyboardInterrupt here on the main thread, or in it from any other."""
    if threading.current_thread() is threading.main_thread():
        raise KeyboardInterrupt
    import _thread

    _thread.interrupt_main()
