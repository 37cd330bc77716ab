"""The conversation and the turn loop: call the model, run its tools, repeat until it is done.

Invariant kept at every exit (done, error, Ctrl+C at any moment, turn cap): every `tool_use` in
the conversation is answered by exactly one `tool_result` in the next message, so the next request
is one the API accepts. The calls not answered yet are state (`_open_calls`, see
agent/open_calls.py), and one method, `_close_open_calls`, answers them, whatever ended the step.
A step returns how the turn ends (agent/endings.py), or None to go on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from mini_claude.agent import endings
from mini_claude.agent.compaction import CompactionFailed, ContextKeeper
from mini_claude.agent.conversation import Conversation, Message, text_blocks
from mini_claude.agent.endings import CUT_OFF, Ending
from mini_claude.agent.open_calls import OpenToolCalls
from mini_claude.agent.request_view import CACHE_MARK, RequestParts, RequestView
from mini_claude.agent.spend_cap import SpendCap
from mini_claude.core import prompts
from mini_claude.core.config import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_TOOL_CALLS
from mini_claude.core.events import (
    ContextCompacted,
    EventSink,
    MemoriesRecalled,
    Notice,
    RequestStarted,
    TextDone,
    TurnEnded,
)
from mini_claude.core.hook_points import TurnHooks
from mini_claude.core.interrupts import sigint_deferred, terminations_end_the_turn
from mini_claude.core.untrusted import encodable, encodable_value
from mini_claude.llm.client import ModelClient
from mini_claude.llm.model_errors import ModelError, PromptTooLong
from mini_claude.llm.streamed_response import StreamedResponse
from mini_claude.llm.thinking import with_room_for
from mini_claude.sessions.loading.loader import Compaction
from mini_claude.tools.base import ToolContext
from mini_claude.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from mini_claude.memory.recall.memory_recall import MemoryRecall

log = logging.getLogger("mini_claude")


class Agent:
    def __init__(
        self,
        *,
        llm: ModelClient,
        tools: ToolRegistry,
        tool_context: ToolContext,
        sink: EventSink,
        save: EventSink,
        build_system_prompt: Callable[[], str],
        model: str,
        max_tokens: int,
        max_turns: int,
        recall: MemoryRecall | None = None,
        context_window: int = DEFAULT_CONTEXT_WINDOW,
        reminders: Callable[[], list[dict[str, Any]]] | None = None,  # taken once the prompt is built
        turn_reminders: Callable[[], list[dict[str, Any]]] | None = None,  # each message starts with
        hooks: TurnHooks | None = None,
        max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
        thinking: int | None = None,  # a thinking budget to ask for (None: the model's default)
        spend_cap: SpendCap | None = None,
    ) -> None:
        self.llm, self.tools, self.tool_context, self.sink = llm, tools, tool_context, sink
        self.build_system_prompt = build_system_prompt
        self.model, self.max_tokens, self.max_turns = model, max_tokens, max_turns
        self.recall, self.reminders, self.turn_reminders = recall, reminders, turn_reminders
        self.hooks: TurnHooks = hooks or TurnHooks()
        self.thinking, self.spend = thinking, spend_cap or SpendCap(None, llm)
        self.conversation = Conversation(save, lambda event: self.sink(event))
        self._context: list[dict[str, Any]] = []  # blocks for the next user message (add_context)
        self._system: list[dict[str, Any]] | None = None
        self._last_text = ""
        # A step's state until its calls are answered: the response still streaming, the calls
        # of the stored reply without an answer yet (with their results so far).
        self._streaming: StreamedResponse | None = None
        self._open_calls = OpenToolCalls(tools, tool_context, lambda event: self.sink(event), self.hooks)
        self._open_calls.limit = max_tool_calls
        # What requests hold of `messages` (which stay whole): see request_view.py and compaction.py.
        view = RequestView(context_window, tools.summarize_call)
        self.context = ContextKeeper(
            llm, self.conversation.tell, view, self.hooks.before_compaction, self.spend
        )

    @property
    def messages(self) -> list[Message]:
        return self.conversation.messages

    @messages.setter
    def messages(self, value: list[Message]) -> None:
        self.conversation.messages = value

    def clear(self) -> None:
        """Start a new conversation (the system prompt is rebuilt on the next call)."""
        self.messages, self._context, self._system = [], [], None
        self.context.view.reset()
        self.tools.new_conversation()  # what the last one loaded on demand (MCP tool search) goes
        if self.recall is not None:
            self.recall.reset()

    def continue_conversation(
        self, messages: list[Message], *, compaction: Compaction | None = None, recalled: Iterable[str] = ()
    ) -> None:
        """Go on with a saved conversation (already valid: every tool call answered). It counts as a
        new conversation: the system prompt is built afresh; the memories in `recalled` (file
        names) are in it already, so they are not recalled again."""
        self.clear()
        self.messages, self.context.view.compaction = messages, compaction
        if self.recall is not None:
            self.recall.surfaced.update(recalled)

    def add_context(self, blocks: list[dict[str, Any]]) -> None:
        """Content blocks the user's next message carries before its text, such as the output
        of a command the user ran themselves or a file they attached."""
        self._context.extend(encodable_value(blocks))

    def run_turn(self, user_text: str) -> TurnEnded:
        """One message and all it leads to. SIGTERM or SIGHUP ends it as Ctrl+C does (the reply so
        far kept), then raises interrupts.Terminated: the program should exit."""
        with terminations_end_the_turn():
            return self._run_turn(user_text)

    def _run_turn(self, user_text: str) -> TurnEnded:
        # Bytes that were not UTF-8 (an argument `$'hi \xff'`, typed-ahead input) arrive as
        # surrogate escapes: U+FFFD here, or every request of the conversation fails to encode.
        user_text = encodable(user_text)
        self._close_open_calls("interrupted")  # a Ctrl+C that landed outside the last turn
        verdict = self.hooks.prompt_submitted(user_text)
        context, self._context = [*self._context, *text_blocks(verdict.context)], []
        kept_out = verdict.block or verdict.stop  # a hook keeps the message out of the conversation
        if kept_out is None:
            if self.recall is not None:
                self.recall.start(user_text)
            if self.turn_reminders is not None and (blocks := self.turn_reminders()):
                self.conversation.add("instructions", blocks)  # the mode's, before the message they are for
            self.conversation.add("user", [*context, {"type": "text", "text": user_text}])
        self._last_text = ""
        try:
            ending = self._steps() if kept_out is None else endings.stopped(kept_out)
        except KeyboardInterrupt:
            ending = endings.INTERRUPTED
        except endings.TurnStopped as stopped:  # a limit reached (the spend cap)
            ending = stopped.ending
        except Exception as error:  # a bug of ours must not cost the user the conversation
            log.exception("internal error during a turn")
            ending = endings.internal_error(error)
        self._close_open_calls(ending.unanswered, note=ending.note)
        self.hooks.turn_ended()
        if ending.notice:
            self.sink(Notice(ending.notice, ending.level))
        if (status := self.context.view.status()) is not None:
            self.sink(status)
        ended = TurnEnded(ending.reason, self._last_text, ending.notice or None)
        self.sink(ended)
        return ended

    def _steps(self) -> Ending:
        """Model calls until one ends the turn, at most max_turns of them; a Stop hook may
        have the model go on (its reason is the model's next instruction)."""
        again = False
        for _ in range(self.max_turns):
            ending = self._step()
            if ending is endings.DONE:
                verdict = self.hooks.stopping(again)
                if verdict.stop is not None:
                    return endings.stopped(verdict.stop)
                if verdict.block is not None:
                    self.conversation.add("notice", text_blocks((verdict.block,)))
                    ending, again = None, True
            if ending is not None:
                return ending
        return endings.turn_cap(self.max_turns)

    def compact(self, focus: str | None = None) -> ContextCompacted | None:
        """`/compact`: summarise the conversation now; None when nothing changed (a notice says why)."""
        self._close_open_calls("interrupted")  # a Ctrl+C that landed outside the last turn
        return self.context.compact(self.request_parts(), focus)

    def _step(self) -> Ending | None:
        """One model call and the tools it asks for; how the turn ends, or None to go on."""
        if self.reminders is not None and self._system_blocks() and (blocks := self.reminders()):
            self.conversation.add("instructions", blocks)
        if self.recall is not None and (recalled := self.recall.take_ready()) is not None:
            self.conversation.add("memories", recalled.blocks, tuple(recalled.file_names))
            self.sink(MemoriesRecalled(tuple(recalled.file_names)))
        response = self._call_model()
        if isinstance(response, Ending):
            return response
        self._store_reply(keep=response.stop_reason != "refusal")  # sent back, it would be refused again
        self.sink(response.usage)
        self.spend.after_call()
        if response.stop_reason in CUT_OFF and self._open_calls.calls:
            # The last tool call is incomplete; running any of them could act on half an intention.
            self._close_open_calls("output_cut")
            return None
        if (ending := endings.by_stop_reason(response.stop_reason, bool(self._open_calls.calls))) is not None:
            return ending
        ended = self._open_calls.run_all(response.refused_tool_calls)
        if ended is not None and ended.ends_turn:
            return endings.BY_TOOL[ended.ends_turn]  # the user said no, or a plan was printed
        if (stop := self._open_calls.stopped) is not None:
            return endings.stopped(stop)  # the calls left are answered as the hook stopped them
        self._close_open_calls("interrupted")
        return None

    def _call_model(self) -> StreamedResponse | Ending:
        """One streamed response; when the server refuses the request as too long, the conversation
        is compacted and the call made once more (a second refusal ends the turn)."""
        try:
            return self._stream(self.context.before_call(self.request_parts()))
        except PromptTooLong as refused:
            self._streaming = None
            try:
                tokens = self.context.after_refusal(self.request_parts(), refused.tokens, refused.window)
                return self._stream(tokens)
            except CompactionFailed as failure:
                return endings.model_failed(f"{refused}. {failure}")
            except ModelError as error:
                view = self.context.view
                said = not isinstance(error, PromptTooLong) or error.window or view.window_from_server
                return endings.model_failed(str(error), window_unknown=not said)
        except ModelError as error:
            return endings.model_failed(str(error))

    def _stream(self, tokens: int) -> StreamedResponse:
        """Stream one response to a request of about `tokens`, showing it as it comes."""
        limit = self.context.view.output_limit(with_room_for(self.thinking, self.max_tokens), tokens)
        self.spend.before_call(self.model, tokens, limit)
        response = self._streaming = StreamedResponse(used_tool_ids=self.conversation.tool_use_ids())
        self.sink(RequestStarted())
        messages = self.context.view.request(self.messages)
        for update in self.llm.stream(
            model=self.model, system=self._system_blocks(), messages=messages, tools=self.tools.definitions(),
            max_tokens=limit, response=response, thinking=self.thinking,
        ):  # fmt: skip
            self.sink(update)
        self.context.view.note_usage(response.usage, messages)
        return response

    def _store_reply(self, *, keep: bool = True) -> None:
        """Keep what the model sent (all of it, or as far as it got) and open its tool calls; not
        `keep`: only end its text on screen."""
        response, self._streaming = self._streaming, None
        if response is not None and not keep:
            self.sink(TextDone())
        if response is None or not keep:
            return
        content = response.content()
        if content:
            self.conversation.add("assistant", content)  # merged into a paused reply it goes on with
            self._open_calls.open(content)
            texts = [block["text"] for block in self.messages[-1]["content"] if block["type"] == "text"]
            self._last_text = "".join(texts) or self._last_text

    def _close_open_calls(self, unanswered: str, *, note: str | None = None) -> None:
        """The one place that ends a step: the reply streamed so far is kept, the call shown
        running gets its line closed, and every open call one tool_result (calls without a result
        get the `unanswered` notice); then `note`, a notice for the model, if given. Ctrl+C waits
        until this is done: half of it would leave a conversation the API refuses."""
        with sigint_deferred():
            if self._streaming is not None:
                self.sink(TextDone())
                self._store_reply()
            answers = self._open_calls.answer_all(unanswered)
            if answers:
                self.conversation.add("tool_results", answers)
            if note is not None:
                self.conversation.add("notice", [{"type": "text", "text": prompts.notice(note)}])

    def _system_blocks(self) -> list[dict[str, Any]]:
        # Built once per conversation: the whole prompt is stable, so it is one cached prefix.
        if self._system is None:
            self._system = [{"type": "text", "text": self.build_system_prompt(), "cache_control": CACHE_MARK}]
        return self._system

    def request_parts(self) -> RequestParts:
        return RequestParts(
            self.model, self._system_blocks(), self.tools.definitions(), self.max_tokens, self.messages
        )
