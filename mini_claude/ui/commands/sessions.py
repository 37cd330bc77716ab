"""`/resume [ID]` in the REPL, and what `-c` / `-r [ID]` do before its first prompt: find or pick
the session, show where it was, and go on in it.

The screen is drawn from the end of the transcript at once; the whole conversation loads on a
thread while the prompt is up (a long session takes ~150 ms), and the next message or command
waits for it (`wait_for_resume`)."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterator

from prompt_toolkit.completion import Completion

from mini_claude.app.resume import (
    Opened,
    ResumeError,
    ResumeRequest,
    finish_resume,
    named_session,
    open_session,
    requested_session,
)
from mini_claude.app.session import Session
from mini_claude.core.events import Notice
from mini_claude.core.untrusted import visible_text
from mini_claude.sessions.catalog import SessionSummary, list_sessions, transcript_entries
from mini_claude.sessions.checkpoints.side_files import MAX_NAME_CHARS, SideFileError, read_name, write_name
from mini_claude.sessions.lookup import ID_SHOWN_CHARS
from mini_claude.sessions.transcript.records import TRANSCRIPT_SUFFIX
from mini_claude.sessions.transcript.sessions_folder import SessionsFolderError, open_sessions_dir
from mini_claude.ui.commands.registry import CommandContext, command
from mini_claude.ui.render.resumed_view import show_resumed
from mini_claude.ui.repl.session_picker import pick_session

log = logging.getLogger("mini_claude")

EXIT_FAILED = 1
EXIT_CANCELLED = 130  # as fzf: the user pressed Esc or Ctrl+C in the list
CANCELLED = "No session resumed."
RESUME_HELP = "Continue a saved session of this project (a list to choose from, without an id)"
COMPLETIONS_SHOWN = 20
IN_REPL_LIST = "/resume without an id"  # where the REPL lists sessions, for "see …" in messages
JOIN_SECONDS = 0.1
# They run at once while a resumed session loads; every other command and message waits for it.
COMMANDS_NOT_WAITING = frozenset({"help", "cost", "memory"})


def resume_at_start(ctx: CommandContext, request: ResumeRequest) -> Opened | int:
    """Before the REPL starts: open the session the command line asked for (then, once the
    banner is out, `start_resume`). An exit code when the REPL should not start: nothing to
    resume, or the user cancelled the list."""
    try:
        summary = _choose(ctx) if request.pick else requested_session(ctx.session.settings, request)
        if summary is None:
            ctx.say(CANCELLED)
            return EXIT_CANCELLED
        return open_session(ctx.session, summary, fork=request.fork)
    except ResumeError as error:
        print(f"mini-claude: {visible_text(str(error))}", file=sys.stderr)
        return EXIT_FAILED


def start_resume(ctx: CommandContext, opened: Opened) -> None:
    """Show where the session was, then load it on a thread (see wait_for_resume)."""
    started = time.perf_counter()
    show_resumed(ctx.console, ctx.renderer, opened, ctx.session.agent.tools.summarize_call)
    log.debug("resumed session shown in %.3f s", time.perf_counter() - started)
    if opened.note is not None:
        ctx.say(opened.note, "yellow")
    thread = threading.Thread(target=_load, args=(ctx, opened), name="session-resume", daemon=True)
    ctx.pending = thread
    thread.start()


def wait_for_resume(ctx: CommandContext, before: str = "") -> None:
    """Before the session is used again: the conversation being resumed has loaded. Not waited
    for: the commands that do not touch the conversation (`before` is the line about to run)."""
    name = before.strip().removeprefix("/").partition(" ")[0].lower() if before.startswith("/") else ""
    if name in COMMANDS_NOT_WAITING:
        return
    thread, ctx.pending = ctx.pending, None
    while thread is not None and thread.is_alive():
        try:
            thread.join(JOIN_SECONDS)
        except KeyboardInterrupt:  # it cannot be stopped half way, and it is quick: wait on
            continue


def _load(ctx: CommandContext, opened: Opened) -> None:
    # Told through the renderer, which the REPL lets print above the prompt from any thread.
    started = time.perf_counter()
    try:
        resumed = finish_resume(ctx.session, opened)
        log.debug("resumed session loaded in %.3f s", time.perf_counter() - started)
    except ResumeError as error:  # finish_resume turns any failure into one
        ctx.renderer(Notice(f"Not resumed: {error}", "error"))  # the conversation before goes on
        return
    except Exception as error:  # nothing may escape a thread: it would print a traceback
        log.exception("resuming a session failed")
        ctx.renderer(Notice(f"Not resumed: internal error: {type(error).__name__}: {error}", "error"))
        return
    for warning in resumed.warnings:
        ctx.renderer(Notice(warning, "warning"))


def _complete_ids(session: Session, typed: str) -> Iterator[Completion]:
    """Ids of this project's sessions starting with what was typed, newest first."""
    try:
        dir_fd = open_sessions_dir(session.settings.sessions_dir, create=False)
    except SessionsFolderError:
        return
    if dir_fd is None:
        return
    try:
        entries = transcript_entries(dir_fd)
    except OSError:
        return
    finally:
        os.close(dir_fd)
    current = session.transcript.session_id
    ids = [name.removesuffix(TRANSCRIPT_SUFFIX) for name, _ in entries]
    matching = [i for i in ids if i.startswith(typed.strip().lower()) and i != current]
    for session_id in matching[:COMPLETIONS_SHOWN]:
        yield Completion(session_id, start_position=-len(typed))


@command("resume", RESUME_HELP, usage="[id]", complete=_complete_ids)
def _resume_command(ctx: CommandContext, argument: str) -> None:
    try:
        summary: SessionSummary | None
        if argument:
            summary = named_session(ctx.session.settings, argument, list_command=IN_REPL_LIST)
        else:
            summary = _choose(ctx)
        if summary is None:
            ctx.say(CANCELLED)
            return
        start_resume(ctx, open_session(ctx.session, summary))
    except ResumeError as error:
        ctx.say(str(error), "red")


def _choose(ctx: CommandContext) -> SessionSummary | None:
    """The user's pick among the sessions that can be resumed; None when they cancelled."""
    try:
        sessions = list_sessions(ctx.session.settings.sessions_dir)
    except SessionsFolderError as error:
        raise ResumeError(str(error)) from None
    current = ctx.session.transcript.session_id
    usable = [s for s in sessions if s.problem is None and s.id != current]
    if not usable:
        others = "other " if any(s.id == current for s in sessions) else ""
        raise ResumeError(f"No {others}saved session to resume in this project.")
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        raise ResumeError("The list of sessions needs a terminal: give the session's id instead.")
    return pick_session(usable, unusable=sum(1 for s in sessions if s.problem is not None))


@command("rename", "Name this session (shown in /resume's list and `sessions list`)", usage="NAME")
def _rename(ctx: CommandContext, argument: str) -> None:
    recorder = ctx.session.transcript
    current = read_name(recorder.sessions_dir, recorder.session_id)
    name = " ".join(argument.split())  # one line, whatever was pasted
    if not name:
        named = f"This session is named {visible_text(current)}." if current else "This session has no name."
        ctx.say(f"{named} /rename NAME names it.")
        return
    if len(name) > MAX_NAME_CHARS:
        ctx.say(f"A session's name has at most {MAX_NAME_CHARS} characters; that one has {len(name)}.", "red")
        return
    try:
        write_name(recorder.sessions_dir, recorder.session_id, name)
    except (OSError, SideFileError, SessionsFolderError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        ctx.say(f"Not renamed: {visible_text(reason)}", "red")
        return
    ctx.say(f"Session {recorder.session_id[:ID_SHOWN_CHARS]} is now named {visible_text(name)}.")
