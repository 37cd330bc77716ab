"""Choosing the message `/rewind` goes back to (Up/Down, Enter; Esc cancels), then what to restore
with one key: the code and the conversation, the conversation only, or the code only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_claude.core.untrusted import visible_text
from mini_claude.ui.questions.choose_one import choose_one
from mini_claude.ui.questions.key_answer import read_key_answer

if TYPE_CHECKING:
    from mini_claude.app.rewind import RewindPoint

MIN_WIDTH = 20
BOTH, CONVERSATION, CODE, CANCEL = "both", "conversation", "code", "cancel"
RESTORE_KEYS = {
    BOTH: {"1": (BOTH, "code and conversation"), "b": (BOTH, "code and conversation")},
    CONVERSATION: {"2": (CONVERSATION, "conversation"), "c": (CONVERSATION, "conversation")},
    CODE: {"3": (CODE, "code"), "f": (CODE, "code")},
}
OPTIONS = {BOTH: "1 code and conversation", CONVERSATION: "2 conversation only", CODE: "3 code only"}


def point_row(point: RewindPoint, width: int) -> str:
    """`add new.py · 1 file changed · ran commands` (or MCP tools), cut to `width`."""
    text = visible_text(" ".join(point.turn.text.split())) or "(no text)"
    notes = []
    if point.files_changed_then:
        count = point.files_changed_then
        notes.append(f"{count} file{'s' if count != 1 else ''} changed")
    if point.turn.ran:
        notes.append("ran " + " and ".join(point.turn.ran))
    tail = "".join(f" · {note}" for note in notes)
    room = max(width - len(tail), MIN_WIDTH // 2)
    if len(text) > room:
        text = text[: room - 1] + "…"
    return text + tail


def pick_point(points: list[RewindPoint]) -> RewindPoint | None:
    """The message chosen (newest first in the list), or None when the user cancelled."""
    newest_first = list(reversed(points))
    chosen = choose_one(
        "Rewind to just before which message?",
        len(newest_first),
        lambda i, width: point_row(newest_first[i], width),
    )
    return None if chosen is None else newest_first[chosen]


def ask_what_to_restore(has_code: bool, *, plain: bool) -> str:
    """BOTH, CONVERSATION or CODE by one key; CANCEL for Esc. Without files to restore, only the
    conversation is offered."""
    offered = [BOTH, CONVERSATION, CODE] if has_code else [CONVERSATION]
    answers = {key: value for choice in offered for key, value in RESTORE_KEYS[choice].items()}
    options = ", ".join(OPTIONS[choice] for choice in offered)
    return read_key_answer(
        f"Restore: {options} (Esc: nothing): ", answers, cancel=(CANCEL, "nothing"), plain=plain
    )
