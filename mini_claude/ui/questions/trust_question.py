"""The folder-trust question, asked once at the first REPL start in a folder whose project files
would do more than instruct: what they would do, then one key. `y` trusts the folder, `n` does
not (both remembered); Esc, Ctrl+C and Ctrl+D decide nothing: not trusted now, asked next time.
Keys typed before the question appeared are dropped: a message typed at once is no answer."""

from __future__ import annotations

import contextlib
import sys
import termios

from mini_claude.core.untrusted import marked_text
from mini_claude.ui.questions.key_answer import read_key_answer

ANSWERS = {"y": ("yes", "trusted"), "n": ("no", "not trusted")}
NOT_NOW = ("cancel", "not now")
MAX_LINES_SHOWN = 30  # what the files would do; the rest are counted


def ask_trust(folder: str, would: list[str], *, plain: bool) -> bool | None:
    """True: trust `folder` (shown as given); False: do not; None: not now."""
    lines = [
        f"The project files in {folder} would do more than give instructions:",
        *(f"  {line}" for line in would[:MAX_LINES_SHOWN]),
        *([f"  … and {len(would) - MAX_LINES_SHOWN} more"] if len(would) > MAX_LINES_SHOWN else []),
        "Trust this folder? Then they take effect in every session here (its instruction files are",
        "read either way). [y]es, [n]o, Esc: not now",
    ]
    return yes_no_or_not_now(lines, "Trust it? ", ANSWERS, plain)


def yes_no_or_not_now(
    lines: list[str], prompt: str, answers: dict[str, tuple[str, str]], plain: bool
) -> bool | None:
    """Show `lines` (every character that draws nothing marked), then read one key of `answers`
    (a yes and a no): True, False, or None for Esc, Ctrl+C, Ctrl+D or no terminal."""
    print("\n".join(marked_text(line) for line in lines), flush=True)  # a question: nothing unseen
    drop_keys_typed_ahead()
    answer = read_key_answer(prompt, answers, cancel=NOT_NOW, plain=plain)  # no terminal: not now
    return None if answer == NOT_NOW[0] else answer == "yes"


def drop_keys_typed_ahead() -> None:
    """Keys typed before the question showed (a message started at once) must not answer it:
    the terminal still holds them, unread, until the question reads keys."""
    with contextlib.suppress(termios.error, OSError, ValueError):
        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
