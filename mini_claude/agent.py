"""The conversation and the turn loop: call the model, run its tools, repeat until it is done.

Invariant kept at every exit (done, error, Ctrl+C at any moment, turn cap): every `tool_use` in
the conversation is answered by exactly one `tool_result` in the next message, so the next request
is one the API accepts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from mini_claude import prompts
from mini_claude.events import (
    EventSink,
    MemoriesRecalled,
    Notice,
    RequestStarted,
    TextDone,
    ToolFinished,
    ToolStarted,
    TurnEnded,
)
from mini_claude.interrupts import sigint_deferred
from mini_claude.llm import ModelClient, ModelError, StreamedResponse
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.registry import ToolRegistry

log = logging.getLogger("mini_claude")

Message = dict[str, Any]
CACHE_MARK = {"type": "ephemeral"}
INTERRUPTED_SUMMARY = "interrupted"  # the result line of a tool call that Ctrl+C stopped
REPLY_CUT_NOTICE = (
    "The reply was cut off at the max_tokens limit (set MINI_CLAUDE_MAX_TOKENS to allow longer replies)."
)


class Recalled(Protocol):
    """Memories ready to show the model: one text block per memory."""

    blocks: list[dict[str, Any]]
    file_names: list[str]


class MemoryRecall(Protocol):
    """The memory prefetch as the agent sees it (see memory/prefetch.py)."""

    def start(self, query: str) -> None: ...

    def reply_started(self) -> None:
        """The reply's first event is on screen: recall may use the CPU without delaying it."""
        ...

    def take_ready(self) -> Recalled | None:
        """Return settled, not yet injected memories without ever blocking."""
        ...

    def reset(self) -> None: ...


class _TurnOver(Exception):
    """Ends the turn early; `reason` becomes TurnEnded.reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Agent:
    def __init__(
        self,
        *,
        llm: ModelClient,
        tools: ToolRegistry,
        tool_context: ToolContext,
        sink: EventSink,
        build_system_prompt: Callable[[], str],
        model: str,
        max_tokens: int,
        max_turns: int,
        recall: MemoryRecall | None = None,
    ) -> None:
        self.llm = llm
        self.tools = tools
        self.tool_context = tool_context
        self.sink = sink
        self.build_system_prompt = build_system_prompt
        self.model = model
        self.max_tokens = max_tokens
        self.max_turns = max_turns
        self.recall = recall
        self.messages: list[Message] = []
        self._system: list[dict[str, Any]] | None = None
        self._last_text = ""
        self._recall_held = False

    def clear(self) -> None:
        """Start a new conversation (the system prompt is rebuilt on the next call)."""
        self.messages = []
        self._system = None
        if self.recall is not None:
            self.recall.reset()

    def run_turn(self, user_text: str) -> TurnEnded:
        if not self.llm.configured:
            self.sink(Notice(self.llm.settings.missing_credentials_message, "error"))
            return self._emit_end("error")
        if self.recall is not None:
            self.recall.start(user_text)
            self._recall_held = True
        self._append_user([{"type": "text", "text": user_text}])
        self._last_text = ""
        try:
            for _ in range(self.max_turns):
                self._step()
            self.sink(Notice(prompts.notice("turn_cap", max_turns=self.max_turns), "warning"))
            return self._emit_end("turn_cap")
        except _TurnOver as over:
            return self._emit_end(over.reason)
        except KeyboardInterrupt:
            with sigint_deferred():
                self._answer_dangling_tool_uses()
                self._append_user([{"type": "text", "text": prompts.notice("user_interrupted")}])
            return self._emit_end("interrupted")
        except Exception as error:  # a bug of ours must not cost the user the conversation
            log.exception("internal error during a turn")
            self._answer_dangling_tool_uses()
            self.sink(
                Notice(f"Internal error: {type(error).__name__}: {error} (details in the debug log)", "error")
            )
            return self._emit_end("error")

    def _emit_end(self, reason: str) -> TurnEnded:
        ended = TurnEnded(reason, self._last_text)  # type: ignore[arg-type]
        self.sink(ended)
        return ended

    def _step(self) -> None:
        """One model call and the tools it asks for. Raises _TurnOver when the turn is finished."""
        self._inject_recalled_memories()
        response = StreamedResponse(used_tool_ids=self._tool_use_ids())
        with self._keeping_partial_response(response):
            self.sink(RequestStarted())
            for update in self.llm.stream(
                model=self.model,
                system=self._system_blocks(),
                messages=self._request_messages(),
                tools=self.tools.definitions(),
                max_tokens=self.max_tokens,
                response=response,
            ):
                self.sink(update)
                self._release_recall()
        self._release_recall()
        self.sink(response.usage)
        content = response.content()
        self._last_text = response.text() or self._last_text
        if not content:
            raise _TurnOver("done")
        self.messages.append({"role": "assistant", "content": content})
        tool_uses = [block for block in content if block["type"] == "tool_use"]
        if response.stop_reason == "max_tokens":
            if not tool_uses:
                self.sink(Notice(REPLY_CUT_NOTICE, "warning"))
                raise _TurnOver("max_tokens")
            # The last tool call is incomplete; running any of them could act on half an intention.
            self._answer_tools(tool_uses, {}, missing=prompts.notice("output_cut"))
            return
        if not tool_uses:
            raise _TurnOver("done")
        self._run_tools(tool_uses, response.refused_tool_calls)

    @contextmanager
    def _keeping_partial_response(self, response: StreamedResponse) -> Iterator[None]:
        """If the stream fails or is interrupted, keep what was shown and pair its tool calls."""
        try:
            yield
        except (ModelError, KeyboardInterrupt) as error:
            with sigint_deferred():
                self.sink(TextDone())
                content = response.content()
                self._last_text = response.text() or self._last_text
                if content:
                    self.messages.append({"role": "assistant", "content": content})
                    tool_uses = [block for block in content if block["type"] == "tool_use"]
                    key = "interrupted" if isinstance(error, KeyboardInterrupt) else "stream_failed"
                    self._answer_tools(tool_uses, {}, missing=prompts.notice(key))
            if isinstance(error, ModelError):
                self.sink(Notice(str(error), "error"))
                raise _TurnOver("error") from error
            raise

    def _run_tools(self, tool_uses: list[dict[str, Any]], refused: dict[str, str]) -> None:
        """Run the calls in order; a call in `refused` (id → notice key) is answered without running."""
        results: dict[str, ToolResult] = {}
        shown_running: dict[str, Any] | None = None  # its start is on screen, its end not yet
        try:
            for block in tool_uses:
                name, tool_input = block["name"], block["input"]
                self.sink(ToolStarted(block["id"], name, self.tools.summarize_call(name, tool_input)))
                shown_running = block
                if block["id"] in refused:
                    result = ToolResult(prompts.notice(refused[block["id"]]), "not run", is_error=True)
                else:
                    result = self.tools.run(name, tool_input, self.tool_context)
                results[block["id"]] = result
                self.sink(ToolFinished(block["id"], name, result.summary, result.is_error))
                shown_running = None
        except KeyboardInterrupt:
            if shown_running is not None:
                # The user saw the call start: its line must stay, saying it was stopped.
                with sigint_deferred():
                    tool_id = shown_running["id"]
                    stopped = ToolResult(prompts.notice("interrupted"), INTERRUPTED_SUMMARY, is_error=True)
                    result = results.setdefault(tool_id, stopped)
                    self.sink(ToolFinished(tool_id, shown_running["name"], result.summary, result.is_error))
            raise
        finally:
            with sigint_deferred():
                self._answer_tools(tool_uses, results, missing=prompts.notice("interrupted"))

    def _tool_use_ids(self) -> set[str]:
        """Every tool_use id in the conversation: the API refuses a conversation that repeats one."""
        return {
            block["id"]
            for message in self.messages
            if message["role"] == "assistant"
            for block in message["content"]
            if block.get("type") == "tool_use"
        }

    def _answer_dangling_tool_uses(self) -> None:
        """Safety net for an interrupt that landed between storing a reply and answering its tools."""
        if self.messages and self.messages[-1]["role"] == "assistant":
            tool_uses = [b for b in self.messages[-1]["content"] if b["type"] == "tool_use"]
            self._answer_tools(tool_uses, {}, missing=prompts.notice("interrupted"))

    def _answer_tools(
        self, tool_uses: list[dict[str, Any]], results: dict[str, ToolResult], missing: str
    ) -> None:
        """Append one tool_result per tool_use, in order; calls without a result get `missing`."""
        if not tool_uses:
            return
        blocks = []
        for block in tool_uses:
            result = results.get(block["id"]) or ToolResult(missing, "not run", is_error=True)
            answer: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": block["id"],
                "content": result.content,
            }
            if result.is_error:
                answer["is_error"] = True
            blocks.append(answer)
        self._append_user(blocks)

    def _append_user(self, blocks: list[dict[str, Any]]) -> None:
        """Add user content; merge into a trailing user message so roles keep alternating."""
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": list(blocks)})

    def _release_recall(self) -> None:
        if self._recall_held and self.recall is not None:
            self._recall_held = False
            self.recall.reply_started()

    def _inject_recalled_memories(self) -> None:
        if self.recall is None:
            return
        recalled = self.recall.take_ready()
        if recalled is None or not recalled.blocks:
            return
        self._append_user(recalled.blocks)
        self.sink(MemoriesRecalled(tuple(recalled.file_names)))

    def _system_blocks(self) -> list[dict[str, Any]]:
        # Built once per conversation: the whole prompt is stable, so it is one cached prefix.
        if self._system is None:
            self._system = [{"type": "text", "text": self.build_system_prompt(), "cache_control": CACHE_MARK}]
        return self._system

    def _request_messages(self) -> list[Message]:
        """The conversation with a cache mark on its last block (not stored: the mark moves)."""
        *earlier, last = self.messages
        content = [*last["content"][:-1], {**last["content"][-1], "cache_control": CACHE_MARK}]
        return [*earlier, {**last, "content": content}]
