"""Reviewing a tidy with the user, for `/memory tidy` and `mini-claude memory tidy` alike: the
proposal is built (nothing changes meanwhile), shown as one diff per memory file with its reason,
then the user accepts all, goes through the changes one by one, or cancels; only then is anything
applied. Every line shown is made visible first (see memory/tidy/diff.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.files import safe_read
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import visible_text
from mini_claude.llm.client import ModelClient
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.tidy.apply import ApplyResult, apply_tidy
from mini_claude.memory.tidy.diff import change_diff, change_line, summary_lines
from mini_claude.memory.tidy.proposal import FileChange, Proposal
from mini_claude.memory.tidy.review import TidyFailed, TidyReview
from mini_claude.tools.base import count_noun

NOTHING_CHANGED = "Nothing was changed."


@dataclass
class ReviewIO:
    """How a front end talks to the user: `say` prints lines, `progress` a quiet status line,
    `diff` a diff's lines (coloured where it can), `confirm` asks yes or no: True, False, or
    None when the user cancelled (Ctrl+C, Esc, the end of input), which stops the whole review."""

    say: Callable[[str], None]
    progress: Callable[[str], None]
    diff: Callable[[list[str]], None]
    confirm: Callable[[str], bool | None]


class _Cancelled(Exception):
    """The user cancelled the review: nothing is applied, not even changes accepted already."""


def build_proposal(
    store: MemoryStore,
    llm: ModelClient,
    sessions_dir: Path | None,
    focus: str,
    io: ReviewIO,
    project_root: Path | None = None,
) -> Proposal | None:
    """The proposal, or None (having said why) when the tidy failed or was interrupted."""
    try:
        return TidyReview(
            store,
            llm,
            sessions_dir=sessions_dir,
            progress=io.progress,
            side_query_timeout=llm.settings.side_query_timeout,
            project_root=project_root,
        ).propose(focus)
    except KeyboardInterrupt:
        io.say(f"Tidy cancelled. {NOTHING_CHANGED}")
    except (TidyFailed, MemoryStoreError, OSError) as error:
        reason = safe_read.describe(error) if isinstance(error, OSError) else str(error)
        io.say(f"Tidy stopped: {visible_text(reason)}. {NOTHING_CHANGED}")
    return None


def show_proposal(proposal: Proposal, io: ReviewIO) -> None:
    io.say("\n".join(summary_lines(proposal)))
    total = len(proposal.changes)
    for number, change in enumerate(proposal.changes, 1):
        show_change(change, number, total, io)


def show_change(change: FileChange, number: int, total: int, io: ReviewIO) -> None:
    io.say(f"\n[{number}/{total}] {change_line(change)}")
    io.diff(change_diff(change))


def review_and_apply(store: MemoryStore, proposal: Proposal, io: ReviewIO) -> bool:
    """Show the proposal, ask, apply what was accepted; False when applying failed. Cancelling
    at any question (Ctrl+C, Esc) applies nothing, even changes accepted one by one before it."""
    changes = proposal.changes
    try:
        show_proposal(proposal, io)
        if not changes:
            return True
        io.say("")
        accepted = _accepted(changes, io)
    except (_Cancelled, KeyboardInterrupt):
        io.say(f"Tidy cancelled. {NOTHING_CHANGED}")
        return True
    if not accepted:
        io.say(f"Cancelled. {NOTHING_CHANGED}")
        return True
    return apply_and_report(store, accepted, io)


def _accepted(changes: Sequence[FileChange], io: ReviewIO) -> list[FileChange]:
    if len(changes) == 1:
        return list(changes) if _ask(io, "Apply this change?") else []
    if _ask(io, f"Apply all {len(changes)} changes?"):
        return list(changes)
    if not _ask(io, "Go through them one by one?"):
        return []
    accepted = []
    for number, change in enumerate(changes, 1):
        show_change(change, number, len(changes), io)
        if _ask(io, "Apply this change?"):
            accepted.append(change)
    return accepted


def _ask(io: ReviewIO, question: str) -> bool:
    answer = io.confirm(question)
    if answer is None:
        raise _Cancelled
    return answer


def apply_and_report(store: MemoryStore, changes: Sequence[FileChange], io: ReviewIO) -> bool:
    try:
        result = apply_tidy(store, changes)
    except MemoryStoreError as error:
        io.say(f"Tidy: {visible_text(str(error))}")
        return False
    except KeyboardInterrupt:
        io.say("Tidy interrupted: what it had applied was put back.")
        return False
    io.say("\n".join(result_lines(result)))
    return True


def result_lines(result: ApplyResult) -> list[str]:
    lines = []
    if result.applied:
        lines.append(f"Applied {count_noun(len(result.applied), 'change')}; the index was updated:")
        lines.extend("  " + change_line(change) for change in result.applied)
    if result.skipped:
        lines.append(f"Not applied ({len(result.skipped)}):")
        lines.extend("  " + visible_text(line) for line in result.skipped)
    if result.trash is not None:
        lines.append(
            f"What it replaced or deleted is kept in {visible_path(str(result.trash))}; /memory undo "
            "(or mini-claude memory undo) puts it back."
        )
    elif not result.applied:
        lines.append(NOTHING_CHANGED)
    return lines
