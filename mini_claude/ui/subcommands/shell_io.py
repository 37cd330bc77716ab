"""What the shell subcommands share: their exit statuses, a problem said in one line on stderr, and
the one yes/no question asked before something is deleted."""

from __future__ import annotations

import sys

from mini_claude.core.untrusted import visible_text

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2  # as argparse: a bad argument, or no terminal to ask on


def fail(text: str, status: int = EXIT_FAILED) -> int:
    """`mini-claude: text` on stderr, made visible; `status` to exit with."""
    print(f"mini-claude: {visible_text(text)}", file=sys.stderr)
    return status


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
