"""The prompt's keys for looking back: Ctrl+O opens the transcript view over the prompt (which is
back as it was after), Esc Esc on an empty prompt is `/rewind`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from prompt_toolkit.application import get_app, in_terminal
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from mini_claude.ui.conversation.transcript_text import conversation_entries
from mini_claude.ui.conversation.transcript_view import transcript_app

if TYPE_CHECKING:
    from mini_claude.app.session import Session

REWIND_COMMAND = "/rewind"


def bind_conversation_keys(bindings: KeyBindings, session: Callable[[], Session]) -> None:
    @bindings.add("c-o")
    def _transcript(event: KeyPressEvent) -> None:
        event.app.create_background_task(show_transcript_over_prompt(session()))

    empty = Condition(lambda: not get_app().current_buffer.text)

    @bindings.add("escape", "escape", filter=empty)
    def _rewind(event: KeyPressEvent) -> None:
        event.current_buffer.text = REWIND_COMMAND  # shown as typed, and taken as typed
        event.app.exit(result=REWIND_COMMAND)


async def show_transcript_over_prompt(session: Session) -> None:
    agent = session.agent
    entries = conversation_entries(agent.messages, agent.tools.summarize_call)
    async with in_terminal():
        await transcript_app(entries).run_async()
