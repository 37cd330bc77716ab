"""The tool registry: definitions from prompts/tools.toml bound to handlers by name.

`run` is the one place where any failure of a tool becomes an `is_error` result for the model;
only KeyboardInterrupt (the user pressed Ctrl+C) escapes.
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any

from mini_claude.core import prompts
from mini_claude.core.errors import PermissionDenied, ToolError
from mini_claude.core.untrusted import visible_text
from mini_claude.tools.base import ToolContext, ToolResult, ToolSource
from mini_claude.tools.calls.input_schema import describe_schema, schema_problem
from mini_claude.tools.calls.short_forms import short_form

Handler = Callable[..., ToolResult]  # (ctx: ToolContext, **input) -> ToolResult

SUMMARY_CHARS = 80
PERMISSION_DENIED_SUMMARY = "permission denied"
# Which input key is "the" argument shown on the one-line display, by priority.
SUMMARY_KEYS = ("file_path", "command", "pattern", "path", "name", "url", "description")
# Keys whose tail matters more than their head (the file name is at the end).
TAIL_KEYS = ("file_path", "path")
_SPACES = re.compile(r"[ \t]+")
# Built-in tools that only read: several calls of one reply run side by side (agent/side_by_side.py).
READ_ONLY_TOOLS = frozenset({"read_file", "list_files", "grep_search", "web_fetch"})
SUMMARY_LINE_BREAK = " ⏎ "  # where a multi-line argument (a script) breaks, on its one line

log = logging.getLogger("mini_claude")


class ToolRegistry:
    def __init__(
        self,
        definitions: list[dict[str, Any]],
        handlers: Mapping[str, Handler],
        limits: Mapping[str, object] | None = None,
    ) -> None:
        """`limits` fill the {{placeholders}} in descriptions, so they always quote the real limits."""
        names = [d["name"] for d in definitions]
        missing_handlers = sorted(set(names) - set(handlers))
        missing_definitions = sorted(set(handlers) - set(names))
        if missing_handlers or missing_definitions or len(set(names)) != len(names):
            raise ValueError(
                f"tool definitions and handlers differ: no handler for {missing_handlers}, "
                f"no definition for {missing_definitions}, names {names}"
            )
        self._definitions = {d["name"]: filled_descriptions(d, limits or {}) for d in definitions}
        self._handlers = dict(handlers)
        self._sources: list[ToolSource] = []
        self._offered: dict[str, Callable[[], bool]] = {}
        self._read_only = {name for name in self._definitions if name in READ_ONLY_TOOLS}
        self._concurrent = set(self._read_only)
        self._keep: Callable[[str], bool] = lambda name: True  # a subset's filter (`subset`)

    def add_source(self, source: ToolSource) -> None:
        """Tools that come and go (an MCP server's): sent and run beside the built-in ones."""
        self._sources.append(source)

    def new_conversation(self) -> None:
        for source in self._sources:
            source.new_conversation()

    def add(
        self, definition: dict[str, Any], handler: Handler, offered: Callable[[], bool], *,
        read_only: bool = False, concurrent: bool = False,
    ) -> None:  # fmt: skip
        """One more tool (a skill tool, built from the user's files by app/), in the requests only
        while `offered()` says so. A `read_only` tool changes nothing (explore agents may use it);
        its calls, and a `concurrent` tool's (the agent tool), run beside the reply's others."""
        name = definition["name"]
        if name in self._definitions:
            raise ValueError(f"a tool named {name} exists already")
        self._definitions[name] = filled_descriptions(definition, {})
        self._handlers[name] = handler
        self._offered[name] = offered
        if read_only:
            self._read_only.add(name)
        if read_only or concurrent:
            self._concurrent.add(name)

    def is_read_only(self, name: str) -> bool:
        """Whether `name` is a tool that changes nothing (an MCP server's is not: its word only)."""
        return name in self._read_only

    def runs_concurrently(self, name: str) -> bool:
        """Whether a call of `name` may run beside the reply's other such calls (a tool from a
        source, an MCP server's, never does: whether it only reads is its server's word)."""
        return name in self._concurrent

    def subset(self, keep: Callable[[str], bool]) -> ToolRegistry:
        """The tools whose names `keep` says yes to (a sub-agent's), run by the same handlers and
        sources; what is offered stays as it is here."""
        part = ToolRegistry([], {})
        part._definitions = {name: d for name, d in self._definitions.items() if keep(name)}
        part._handlers = {name: h for name, h in self._handlers.items() if keep(name)}
        part._offered, part._sources = dict(self._offered), list(self._sources)
        part._concurrent = {name for name in self._concurrent if keep(name)}
        part._read_only = {name for name in self._read_only if keep(name)}
        part._keep = lambda name: self._keep(name) and keep(name)
        return part

    @property
    def names(self) -> list[str]:
        return list(self._definitions)

    def definitions(self) -> list[dict[str, Any]]:
        """The API `tools` parameter: name, description, input_schema for every tool offered now."""
        built_in = [
            {
                "name": d["name"],
                "description": d["description"],
                "input_schema": copy.deepcopy(d["input_schema"]),
            }
            for d in self._definitions.values()
            if d["name"] not in self._offered or self._offered[d["name"]]()
        ]
        return built_in + self._source_definitions()

    def summarize_call(self, name: str, tool_input: object) -> str:
        """The main argument of a call (file path, command, pattern), shortened for one line."""
        if not isinstance(tool_input, dict):
            return ""
        if name not in self._definitions and (source := self._source_of(name)) is not None:
            return _one_line(source.summarize_call(name, tool_input), keep_tail=False)
        for key in SUMMARY_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                return _one_line(value, keep_tail=key in TAIL_KEYS)
        return ""

    def run(self, name: str, tool_input: object, ctx: ToolContext) -> ToolResult:
        """Run one tool call; never raises except KeyboardInterrupt."""
        handler = self._handlers.get(name)
        source = self._source_of(name) if handler is None else None
        if handler is None and source is None:
            available = ", ".join([*self._definitions, *(d["name"] for d in self._source_definitions())])
            text = prompts.notice("unknown_tool", name=name, available=available)
            return ToolResult(text, f"unknown tool {name}", is_error=True)
        # A source checks its own (full JSON Schema) inputs; here only that the input is an object.
        schema = self._definitions[name]["input_schema"] if source is None else {}
        problem = schema_problem(schema, tool_input)
        if problem is not None:
            expected = describe_schema(schema) if source is None else prompts.notice("input_see_schema")
            text = prompts.notice("invalid_tool_input", tool=name, problem=problem, expected=expected)
            return ToolResult(text, "invalid input", is_error=True)
        assert isinstance(tool_input, dict)
        try:
            if source is not None:  # its own schemas: checked by the source, in full
                result = source.run(name, tool_input, ctx)
            else:
                assert handler is not None
                result = handler(ctx, **tool_input)
        except KeyboardInterrupt:
            raise
        except PermissionDenied as denied:
            return ToolResult(
                str(denied), PERMISSION_DENIED_SUMMARY, is_error=True, denied=True,
                ends_turn="refused_by_user" if denied.refused_by_user else None,
            )  # fmt: skip
        except ToolError as error:
            message = str(error)
            return ToolResult(message, short_form(message) or name, is_error=True)
        except Exception as error:
            log.exception("tool %s failed", name)
            text = prompts.notice("tool_internal_error", tool=name, kind=type(error).__name__, message=error)
            return ToolResult(text, f"internal error: {type(error).__name__}", is_error=True)
        if ctx.tool_used is not None and not result.is_error:
            try:
                ctx.tool_used(name, tool_input)
            except Exception:  # what listens must not cost the call its result
                log.exception("after tool %s", name)
        return result

    def _source_of(self, name: str) -> ToolSource | None:
        if not self._keep(name):
            return None
        return next((source for source in self._sources if source.owns(name)), None)

    def _source_definitions(self) -> list[dict[str, Any]]:
        return [d for source in self._sources for d in source.definitions() if self._keep(d["name"])]


def default_registry() -> ToolRegistry:
    """The standard tools, defined in prompts/tools.toml."""
    from mini_claude.tools import files, patterns, plan, search, shell, walk
    from mini_claude.tools.web import fetch

    handlers: dict[str, Handler] = {
        "read_file": files.read_file,
        "write_file": files.write_file,
        "edit_file": files.edit_file,
        "list_files": search.list_files,
        "grep_search": search.grep_search,
        "run_shell": shell.run_shell,
        "exit_plan_mode": plan.exit_plan_mode,
        "web_fetch": fetch.web_fetch,
    }
    limits = {
        "max_lines": files.MAX_LINES,
        "max_kb": files.MAX_READ_BYTES // 1024,
        "max_line_chars": f"{files.MAX_LINE_CHARS:,}",
        "skipped": ", ".join(sorted(walk.SKIPPED_DIRS)),
        "max_entries": search.MAX_LIST_ENTRIES,
        "max_matches": search.MAX_MATCHES,
        "max_file_mb": search.MAX_GREP_FILE_BYTES // 2**20,
        "search_seconds": f"{patterns.SEARCH_TIME_LIMIT_S:g}",
        "match_seconds": f"{patterns.MATCH_TIME_LIMIT_S:g}",
        "default_timeout": f"{shell.DEFAULT_TIMEOUT_S:g}",
        "max_timeout": f"{shell.MAX_TIMEOUT_S:g}",
        "max_output": f"{shell.MAX_OUTPUT_CHARS:,}",
        **fetch.DESCRIBED_LIMITS,
    }
    return ToolRegistry(prompts.load_toml("tools.toml")["tool"], handlers, limits)


def filled_descriptions(node: Any, limits: Mapping[str, object]) -> Any:
    """A deep copy of a definition with every `description` stripped and its placeholders filled."""
    if isinstance(node, dict):
        return {
            key: prompts.fill(value.strip(), **limits)
            if key == "description" and isinstance(value, str)
            else filled_descriptions(value, limits)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [filled_descriptions(item, limits) for item in node]
    return node


def _shorten(text: str, *, keep_tail: bool = False, limit: int = SUMMARY_CHARS) -> str:
    if len(text) <= limit:
        return text
    return "…" + text[-(limit - 1) :] if keep_tail else text[: limit - 1] + "…"


def _one_line(value: str, *, keep_tail: bool) -> str:
    """A command or path on one visible line: escape codes written out, line breaks marked (a
    script does not pass for one command), and when it is cut, how many lines did not fit."""
    # Only spaces and tabs fold: any other invisible character (a carriage return) is written out.
    lines = [
        visible_text(_SPACES.sub(" ", line.strip(" \t"))) for line in value.split("\n") if line.strip(" \t")
    ]
    if len(lines) <= 1:
        return _shorten(lines[0] if lines else "", keep_tail=keep_tail)
    joined = SUMMARY_LINE_BREAK.join(lines)
    if len(joined) <= SUMMARY_CHARS:
        return joined
    room = SUMMARY_CHARS - len(f" … (+{len(lines)} lines)")
    shown, used = 0, 0  # lines that fit, in whole or in part
    while shown < len(lines) and used < room:
        used += len(lines[shown]) + len(SUMMARY_LINE_BREAK)
        shown += 1
    rest = len(lines) - shown
    return joined[:room].rstrip() + (f" … (+{rest} {'line' if rest == 1 else 'lines'})" if rest else " …")
