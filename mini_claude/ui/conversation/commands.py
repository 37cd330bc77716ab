"""`/rewind` (also Esc Esc at an empty prompt) and `/export [FILE]`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from mini_claude.app.rewind import RewindPoint, rewind, rewind_points
from mini_claude.core.paths import display_path
from mini_claude.core.untrusted import visible_text
from mini_claude.sessions.checkpoints.turns import COMMANDS
from mini_claude.sessions.lookup import ID_SHOWN_CHARS
from mini_claude.ui.commands.registry import CommandContext, command
from mini_claude.ui.conversation.markdown_export import (
    ExportError,
    conversation_markdown,
    export_target,
    write_export,
)
from mini_claude.ui.conversation.rewind_picker import BOTH, CANCEL, CODE, ask_what_to_restore, pick_point
from mini_claude.ui.conversation.transcript_text import conversation_entries

if TYPE_CHECKING:
    from mini_claude.app.session import Session

NOTHING_TO_REWIND = "Nothing to rewind to: you have not sent a message in this conversation yet."
FILES_NAMED = 4  # in the summary before the question; the rest are counted


@command("rewind", "Go back to before one of your messages: the code, the conversation, or both")
def _rewind(ctx: CommandContext, argument: str) -> None:
    points = rewind_points(ctx.session)
    if not points:
        ctx.say(NOTHING_TO_REWIND)
        return
    point = pick_point(points)
    if point is None:
        ctx.say("Nothing rewound.")
        return
    for line in rewind_summary(point, ctx.session):
        ctx.say(line)
    choice = ask_what_to_restore(bool(point.files), plain=not ctx.console.is_terminal)
    if choice == CANCEL:
        ctx.say("Nothing rewound.")
        return
    done = rewind(ctx.session, point, code=choice in (BOTH, CODE), conversation=choice != CODE)
    if done.restored is not None:
        restored = done.restored
        count = len(restored.written) + len(restored.removed)
        ctx.say(f"Restored {count} file{'s' if count != 1 else ''} to before that message.")
        for problem in restored.problems:
            ctx.say(problem, "red")
    if done.session_id is not None:
        ctx.renderer.context_line.reset()
        old = ctx.session.transcript.writer.copied_from[:ID_SHOWN_CHARS]
        ctx.say(
            f"The conversation is back to before that message; it goes on as session "
            f"{done.session_id[:ID_SHOWN_CHARS]} (the whole one stays: /resume {old}). "
            "Your message is back in the prompt.",
        )
        ctx.draft = done.draft


def rewind_summary(point: RewindPoint, session: Session) -> list[str]:
    """What each choice would do, before the question."""
    project = session.agent.tool_context.project_dir
    text = " ".join(point.turn.text.split())
    lines = [f"Rewind to before “{visible_text(text[:60] + ('…' if len(text) > 60 else ''))}”:"]
    if point.files:
        names = [display_path(Path(c.path), project) for c in point.files[:FILES_NAMED]]
        more = len(point.files) - FILES_NAMED
        shown = ", ".join(names) + (f" and {more} more" if more > 0 else "")
        files = "1 file goes" if len(point.files) == 1 else f"{len(point.files)} files go"
        lines.append(f"  code: {files} back ({shown})")
    else:
        lines.append("  code: no file was changed by mini-claude's file tools since then")
    lines.append("  conversation: this message and everything after it are taken back")
    if point.ran_since:
        ran = " and ".join("shell commands" if kind == COMMANDS else kind for kind in point.ran_since)
        lines.append(f"  {ran} ran from then on: what they changed stays as it is")
    return lines


@command("export", "Write the conversation to a markdown file", usage="[file]")
def _export(ctx: CommandContext, argument: str) -> None:
    session = ctx.session
    project = session.agent.tool_context.project_dir
    try:
        target = export_target(argument, project)
    except ExportError as error:
        ctx.say(visible_text(str(error)), "red")
        return
    shown = display_path(target, project)
    if target.exists() and ctx.confirm(f"{shown} exists. Replace it?") is not True:
        ctx.say("Not exported.")
        return
    entries = conversation_entries(session.agent.messages, session.agent.tools.summarize_call)
    session_id = session.transcript.session_id[:ID_SHOWN_CHARS]
    heading = (
        f"mini-claude conversation {session_id} · {session.agent.model} · {dt.datetime.now():%Y-%m-%d %H:%M}"
    )
    try:
        write_export(target, conversation_markdown(entries, heading))
    except ExportError as error:
        ctx.say(visible_text(str(error)), "red")
        return
    ctx.say(f"Exported the conversation ({len(session.agent.messages)} messages) to {shown}.")
