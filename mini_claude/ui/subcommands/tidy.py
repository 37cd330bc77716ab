"""`mini-claude memory tidy [FOCUS] [--dry-run | --yes]`: tidy from the shell. On a terminal the
review asks as in the REPL; elsewhere nobody can answer, so one of the flags must say what to do.
Progress goes to stderr, the proposal and results to stdout."""

from __future__ import annotations

import os
import sys

from mini_claude.core.config import Settings, memory_project_root
from mini_claude.core.untrusted import visible_lines, visible_text
from mini_claude.llm.client import ModelClient
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.ui.commands.memory.tidy_review import (
    ReviewIO,
    apply_and_report,
    build_proposal,
    review_and_apply,
    show_proposal,
)
from mini_claude.ui.subcommands.shell_io import EXIT_FAILED, EXIT_OK, EXIT_USAGE, fail


def _say(text: str) -> None:
    sys.stdout.write(visible_lines(text) + "\n")
    sys.stdout.flush()


def _progress(text: str) -> None:
    print(visible_text(text), file=sys.stderr, flush=True)


def _confirm(question: str) -> bool | None:
    """y or n, Enter meaning no; None for Ctrl+C, the end of input, or Esc (then Enter: the
    terminal hands over no key before it), which cancel the whole review."""
    try:
        answer = input(visible_text(question) + " [y/N]: ")
    except (EOFError, KeyboardInterrupt):
        print(file=sys.stderr)
        return None
    if "\x1b" in answer:
        return None
    return answer.strip().lower() in ("y", "yes")


def _io() -> ReviewIO:
    return ReviewIO(_say, _progress, lambda lines: _say("\n".join(lines)), _confirm)


def run_tidy_command(settings: Settings, focus: str, *, dry_run: bool, yes: bool) -> int:
    try:
        return _tidy(settings, focus, dry_run=dry_run, yes=yes)
    except BrokenPipeError:
        # The reader went away (`| head`): stop there; with --yes before the output ended, nothing
        # was applied yet. Python would otherwise complain again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED


def _tidy(settings: Settings, focus: str, *, dry_run: bool, yes: bool) -> int:
    if not settings.can_call_model:
        return fail(
            "memory tidy asks the model: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL)",
            EXIT_USAGE,
        )
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if not (dry_run or yes or interactive):
        return fail(
            "memory tidy asks before changing anything, and no terminal is here to answer: "
            "pass --dry-run to print the proposal, or --yes to apply it",
            EXIT_USAGE,
        )
    store, io = MemoryStore(settings.memory_dir), _io()
    root = memory_project_root(settings.project_dir)
    proposal = build_proposal(store, ModelClient(settings), settings.sessions_dir, focus, io, root)
    if proposal is None:
        return EXIT_FAILED
    if dry_run:
        show_proposal(proposal, io)
        return EXIT_OK
    if yes:
        show_proposal(proposal, io)
        ok = apply_and_report(store, proposal.changes, io) if proposal.changes else True
        return EXIT_OK if ok else EXIT_FAILED
    return EXIT_OK if review_and_apply(store, proposal, io) else EXIT_FAILED
