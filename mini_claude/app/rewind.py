"""`/rewind`: back to just before one of the user's messages. The code (each file a file tool
changed since, given the content its checkpoint kept), the conversation (it goes on in a new
transcript holding what came before; the old one stays, to be resumed), or both. Changes made by
shell commands and MCP tools are not in any checkpoint: the points say which turns ran them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mini_claude.sessions.checkpoints.file_checkpoints import Checkpoint
from mini_claude.sessions.checkpoints.restore import Restored, restore_files
from mini_claude.sessions.checkpoints.turns import (
    COMMANDS,
    MCP_TOOLS,
    UserTurn,
    conversation_before,
    user_turns,
)

if TYPE_CHECKING:
    from mini_claude.app.session import Session


@dataclass(frozen=True)
class RewindPoint:
    turn: UserTurn
    files: list[Checkpoint]  # what restoring the code to before this message writes back
    files_changed_then: int  # files a file tool changed during this message's turn
    ran_since: tuple[str, ...]  # what this turn or a later one ran that is not undone (turns.COMMANDS…)


@dataclass(frozen=True)
class Rewound:
    restored: Restored | None  # None: the code was left as it is
    draft: str  # the message rewound to, back in the prompt to edit (conversation rewound)
    session_id: str | None  # the new session the conversation goes on in (conversation rewound)


def rewind_points(session: Session) -> list[RewindPoint]:
    """Each message the user sent in this conversation, oldest first."""
    checkpoints = session.transcript.checkpoints
    turns = user_turns(session.agent.messages)
    points = []
    for turn in turns:
        later = {kind for other in turns[turn.number :] for kind in other.ran}
        ran_since = tuple(kind for kind in (COMMANDS, MCP_TOOLS) if kind in later)
        points.append(
            RewindPoint(
                turn, checkpoints.before(turn.number), checkpoints.files_changed(turn.number), ran_since
            )
        )
    return points


def rewind(session: Session, point: RewindPoint, *, code: bool, conversation: bool) -> Rewound:
    recorder, agent = session.transcript, session.agent
    restored = None
    if code:
        restored = restore_files(point.files, recorder.sessions_dir, recorder.session_id)
    if not conversation:
        return Rewound(restored, "", None)
    kept = conversation_before(agent.messages, point.turn)
    compaction = agent.context.view.compaction
    if compaction is not None and compaction.replaced > len(kept):
        compaction = None  # it summarised what is undone now: requests hold the messages again
    recorder.rewound(
        kept,
        point.turn.number,
        compaction.summary if compaction else None,
        compaction.replaced if compaction else 0,
    )
    surfaced = set(agent.recall.surfaced) if agent.recall is not None else set()
    agent.continue_conversation(kept, compaction=compaction, recalled=surfaced)
    return Rewound(restored, point.turn.typed, recorder.session_id)
