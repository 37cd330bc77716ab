"""The one yes/no question a shell subcommand asks before it deletes something."""

from __future__ import annotations

import sys


def can_ask() -> bool:
    """A question needs a terminal to be read on and shown on."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def confirmed(question: str) -> bool:
    """Asks `question [y/N]` on stderr; only y or yes agrees (Ctrl+C or end of input is a no)."""
    sys.stderr.write(f"{question} [y/N]: ")
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        answer = ""
        sys.stderr.write("\n")
    return answer.strip().lower() in ("y", "yes")
