"""The screen after a resume: the last exchanges of the saved conversation (what the user typed,
the replies, one line per tool call, through the same renderer as live output, but compact), then
a rule saying where the saved part ends. Only the tail is looked at: a session of thousands of
messages costs no more to show than one of ten."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mini_claude.core import prompts
from mini_claude.core.events import TextDelta, TextDone, ToolFinished, ToolStarted, TurnEnded
from mini_claude.core.untrusted import visible_text
from mini_claude.sessions.loading.recent import RecentPart, recent_messages
from mini_claude.sessions.lookup import ID_SHOWN_CHARS
from mini_claude.sessions.transcript.sessions_folder import TranscriptError
from mini_claude.sessions.typed_input import typed_text
from mini_claude.tools.calls.short_forms import short_form
from mini_claude.ui.conversation.transcript_text import result_text

if TYPE_CHECKING:
    from rich.console import Console

    from mini_claude.app.resume import Opened
    from mini_claude.ui.render.renderer import Renderer

EXCHANGES_SHOWN = 3  # the last user messages, each with what answered it
REPLY_LINES_SHOWN = 12  # of a longer reply, its end (from a paragraph's start)
USER_CHARS_SHOWN = 300
TOOL_LINES_SHOWN = 6  # per exchange: its last tool calls
FENCES = ("```", "~~~")
UNANSWERED = "no result: the session ended while it ran"
RULE_ENDS_CHARS = 6  # the rule's ends and the spaces around its label

Message = dict[str, Any]
SummarizeCall = Callable[[str, object], str]


@dataclass(frozen=True)
class _Item:
    kind: str  # "user", "reply", "tool", "note"
    text: str  # for a tool: the call's main argument
    name: str = ""  # the tool's
    result: str = ""  # an error's first line (a success shows no result: it is not saved)
    is_error: bool = False
    call_id: str = ""


def show_resumed(console: Console, renderer: Renderer, opened: Opened, summarize_call: SummarizeCall) -> None:
    """What the opened session ends with, read from the end of its transcript (sessions/loading/recent.py)."""
    try:
        recent = recent_messages(opened.writer.path, EXCHANGES_SHOWN)
    except TranscriptError:
        recent = RecentPart()  # the full load says what is wrong
    show_recent(console, renderer, recent, opened.session_id, summarize_call)


def show_recent(
    console: Console, renderer: Renderer, recent: RecentPart, session_id: str, summarize_call: SummarizeCall
) -> None:
    messages = recent.messages
    start = exchanges_start(messages, EXCHANGES_SHOWN)
    earlier = recent.earlier + start
    if earlier:
        _dim(console, f"… {earlier:,} earlier {'message' if earlier == 1 else 'messages'}")
    for exchange in _exchanges(messages[start:], summarize_call):
        console.print()
        for item in _compact(exchange):
            _show(console, renderer, item)
        renderer(TurnEnded("done", ""))  # the renderer's state starts afresh for the next one
    console.print()
    total = _messages(earlier + len(messages) - start)
    label = f"resumed session {session_id[:ID_SHOWN_CHARS]} · {total}"
    if len(label) + RULE_ENDS_CHARS > console.width:
        label = f"resumed · {total}"
    console.rule(label, style="dim", characters="─")


def exchanges_start(messages: list[Message], count: int) -> int:
    """The index of the message that starts the last `count` exchanges (what the user typed)."""
    found = 0
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "user" and any(typed_text(b) for b in messages[index]["content"]):
            found += 1
            if found == count:
                return index
    return 0


def _exchanges(messages: list[Message], summarize_call: SummarizeCall) -> list[list[_Item]]:
    """The messages as exchanges, each started by what the user typed (a command they ran, their
    text: typed_input.py); what mini-claude added to their messages is not shown."""
    exchanges: list[list[_Item]] = []
    calls: dict[str, _Item] = {}  # tool calls waiting for their results
    for message in messages:
        typed_here = False  # a command and the text typed after it are one exchange
        for block in message["content"]:
            kind = block.get("type")
            if message["role"] == "assistant":
                if kind == "text" and str(block.get("text", "")).strip():
                    _current(exchanges).append(_Item("reply", str(block["text"])))
                elif kind == "tool_use":
                    name = str(block.get("name", ""))
                    call_id = str(block.get("id", ""))
                    argument = summarize_call(name, block.get("input"))
                    calls[call_id] = _Item("tool", argument, name, call_id=call_id)
            elif kind == "tool_result":
                call = calls.pop(str(block.get("tool_use_id", "")), None)
                if call is not None:
                    error = block.get("is_error") is True
                    # The result was written for the model: the user reads its short form, as live.
                    result = short_form(result_text(block.get("content"))) if error else ""
                    _current(exchanges).append(replace(call, result=result, is_error=error))
            elif (typed := typed_text(block)) is not None:
                if not typed_here:
                    exchanges.append([])
                typed_here = True
                exchanges[-1].append(_Item("user", typed))
            elif kind == "text" and block.get("text") == prompts.notice("user_interrupted"):
                _current(exchanges).append(_Item("note", "Interrupted."))
            elif kind == "text" and block.get("text") == prompts.notice("transcript_gap"):
                _current(exchanges).append(_Item("note", "(part of the conversation could not be read back)"))
    for call in calls.values():  # the session ended before they were answered
        _current(exchanges).append(replace(call, result=UNANSWERED, is_error=True))
    return exchanges


def _compact(exchange: list[_Item]) -> list[_Item]:
    """The exchange with only its last TOOL_LINES_SHOWN tool lines (and a line for the others)."""
    tools = [index for index, item in enumerate(exchange) if item.kind == "tool"]
    hidden = set(tools[:-TOOL_LINES_SHOWN]) if len(tools) > TOOL_LINES_SHOWN else set()
    if not hidden:
        return exchange
    kept = [item for index, item in enumerate(exchange) if index not in hidden]
    at = min(hidden)
    kept.insert(at, _Item("note", f"… {len(hidden)} earlier tool {'call' if len(hidden) == 1 else 'calls'}"))
    return kept


def _show(console: Console, renderer: Renderer, item: _Item) -> None:
    if item.kind == "user":
        from rich.text import Text

        lines = item.text.strip().splitlines() or [""]
        more = len(lines) > 1 or len(lines[0]) > USER_CHARS_SHOWN
        first = lines[0][:USER_CHARS_SHOWN] + (" …" if more else "")
        # A Text is printed as it is: the console's gate only sees plain strings.
        console.print(Text.assemble(("> ", "dim"), (visible_text(first), "bold")), highlight=False)
    elif item.kind == "reply":
        text, hidden = reply_tail(item.text, REPLY_LINES_SHOWN)
        if hidden:
            _dim(console, f"… {hidden} earlier lines of the reply")
        renderer(TextDelta(text))
        renderer(TextDone())
    elif item.kind == "tool":
        renderer(ToolStarted(item.call_id, item.name, item.text))
        renderer(ToolFinished(item.call_id, item.name, item.result, item.is_error))
    else:
        _dim(console, item.text)


def reply_tail(text: str, max_lines: int) -> tuple[str, int]:
    """A long reply's last lines, from the start of a block (a paragraph, a list, a code block:
    cutting inside a code block would show code as prose), and how many lines were left out."""
    lines = text.strip("\n").split("\n")
    if len(lines) <= max_lines:
        return text, 0
    starts, in_fence = [], False
    for index, line in enumerate(lines):
        fence = line.lstrip().startswith(FENCES)
        if index and not in_fence and (fence or (line.strip() and not lines[index - 1].strip())):
            starts.append(index)
        in_fence = in_fence != fence
    cut = next((index for index in starts if len(lines) - index <= max_lines), None)
    if cut is not None:
        return "\n".join(lines[cut:]), cut
    # The last block alone is too long: its end, reopening its code block if it is one.
    last = starts[-1] if starts else 0
    tail = lines[-max_lines:]
    if lines[last].lstrip().startswith(FENCES):
        tail = [lines[last], *lines[-(max_lines - 1) :]]
    return "\n".join(tail), len(lines) - max_lines


def _dim(console: Console, text: str) -> None:
    console.print(text, style="dim", markup=False, highlight=False)


def _current(exchanges: list[list[_Item]]) -> list[_Item]:
    if not exchanges:
        exchanges.append([])
    return exchanges[-1]


def _messages(count: int) -> str:
    return "1 message" if count == 1 else f"{count:,} messages"
