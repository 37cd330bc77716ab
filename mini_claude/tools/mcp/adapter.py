"""MCP servers' tools as tools of ours: `mcp__server__tool`, with the server's schema (checked: a
tool whose schema is no valid JSON Schema is skipped with a line) and description (wrapped, as
every server text is). They appear when their server connects and go when it fails; each call
asks permission first (`Permissions.check_tool`: the rules, the mode), runs with a time limit and
Esc stops it."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.untrusted import (
    REMINDER_TAG,
    contained,
    encodable_value,
    neutralize,
    visible_text,
    wrap,
)
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.mcp import results
from mini_claude.tools.mcp.connection import ServerView
from mini_claude.tools.mcp.manager import McpManager
from mini_claude.tools.mcp.tool_search import SEARCH_TOOL, McpTool, ToolSearch

log = logging.getLogger("mini_claude")

PREFIX, SEPARATOR = "mcp", "__"
MAX_NAME_CHARS = 64  # what the Messages API takes of a tool's name
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_-]")
MAX_DESCRIPTION_CHARS = 2_000
MAX_SCHEMA_CHARS = 60_000
# The property names the Messages API takes in a tool's input schema: one it refuses fails every
# request (a 400 naming the tools array), not just that tool's calls.
API_PROPERTY_NAME = re.compile(r"[a-zA-Z0-9_.-]{1,64}")
MAX_SKIP_LINES = 5  # of one server's connection; the rest are counted
DESCRIPTION_TAG = "tool-description"


def tool_name(server: str, tool: str) -> str:
    """Claude Code's name for a server's tool; characters a tool name cannot hold become `_`."""
    return SEPARATOR.join((PREFIX, server, _NOT_IN_NAME.sub("_", tool)))


class McpTools:
    """The tools of every connected server, as a `ToolSource` of the registry."""

    def __init__(
        self, manager: McpManager, *, call_timeout: float, search_after: int, warn: Callable[[str], None]
    ) -> None:
        self.manager, self.call_timeout, self.warn = manager, call_timeout, warn
        self._tools: dict[str, McpTool] = {}  # replaced whole, never changed: a snapshot
        self.search = ToolSearch(search_after)
        manager.subscribe(self._changed)
        for view in manager.views():  # servers connected already
            self._changed(ServerView(view.config), view)

    def tools(self) -> list[McpTool]:
        return list(self._tools.values())

    def definitions(self) -> list[dict[str, Any]]:
        return self.search.definitions(self.tools(), self._servers())

    def owns(self, name: str) -> bool:
        return name in self._tools or (name == SEARCH_TOOL and self.search.deferring(len(self._tools)))

    def summarize_call(self, name: str, tool_input: dict[str, Any]) -> str:
        first = next((value for value in tool_input.values() if isinstance(value, str) and value), None)
        return first if first is not None else json.dumps(tool_input, ensure_ascii=False)[:200]

    def new_conversation(self) -> None:
        self.search.forget()

    def run(self, name: str, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if name == SEARCH_TOOL:
            return self.search.run(tool_input, self.tools())
        tool = self._tools.get(name)
        if tool is None:
            server = name.split(SEPARATOR)[1] if name.count(SEPARATOR) >= 2 else "?"
            raise ToolError(prompts.notice("mcp_tool_gone", server=server, tool=name))
        error = next(iter(tool.validator.iter_errors(tool_input)), None)
        if error is not None:
            raise ToolError(prompts.notice("mcp_input_invalid", tool=name, problem=_problem(error)))
        shown = json.dumps(tool_input, ensure_ascii=False, indent=2)
        reason = f"a tool of the MCP server {tool.server}"
        ctx.permissions.check_tool(name, shown, reason, read_only=tool.read_only)
        return self._call(tool, tool_input)

    def _call(self, tool: McpTool, tool_input: dict[str, Any]) -> ToolResult:
        try:
            result = self.manager.call_tool(tool.server, tool.tool, tool_input, self.call_timeout)
        except TimeoutError:
            seconds = f"{self.call_timeout:g}"
            raise ToolError(prompts.notice("mcp_timed_out", tool=tool.name, seconds=seconds)) from None
        except ConnectionError:
            view = self.manager.view(tool.server)
            # The error may end with the server's own last words (its stderr): no fake reminder.
            error = contained(view.error, REMINDER_TAG) if view else ""
            state, why = (view.state, f": {error}" if error else "") if view else ("gone", "")
            raise ToolError(
                prompts.notice(
                    "mcp_not_connected", server=tool.server, state=state, error=why, tool=tool.name
                )
            ) from None
        except Exception as error:  # the SDK's MCPError, a result it could not read, the server's text
            message = str(error).strip() or type(error).__name__
            said = wrap(results.RESULT_TAG, message, server=tool.server, tool=tool.tool)
            raise ToolError(
                prompts.notice("mcp_call_failed", server=tool.server, tool=tool.name, error=said)
            ) from None
        return results.tool_result(result, tool.server, tool.tool)

    def _servers(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for tool in self._tools.values():
            counts[tool.server] = counts.get(tool.server, 0) + 1
        return counts

    def _changed(self, before: ServerView, after: ServerView) -> None:
        if after.tools == before.tools and after.state == before.state:
            return
        kept = {name: tool for name, tool in self._tools.items() if tool.server != after.name}
        if after.state == "connected":
            kept.update(self._built(after, kept))
        self._tools = kept

    def _built(self, view: ServerView, taken: dict[str, McpTool]) -> dict[str, McpTool]:
        built: dict[str, McpTool] = {}
        skipped: list[str] = []
        for listed in view.tools:
            try:
                tool = _adapted(view.name, listed)
                if tool.name in built or tool.name in taken:
                    raise ValueError(f"its name {tool.name} is taken by another tool")
            except ValueError as problem:
                skipped.append(f"MCP server {view.name}: tool {_shown(listed)} skipped: {problem}")
                continue
            built[tool.name] = tool
        for line in skipped[:MAX_SKIP_LINES]:
            self.warn(line)
        if len(skipped) > MAX_SKIP_LINES:
            more = len(skipped) - MAX_SKIP_LINES
            self.warn(f"MCP server {view.name}: {more} more tools skipped (the debug log says why)")
        for line in skipped:
            log.info("%s", line)
        return built


def _adapted(server: str, listed: Any) -> McpTool:
    """One listed tool as ours; ValueError saying why it cannot be used."""
    from jsonschema import SchemaError
    from jsonschema.validators import validator_for

    name = tool_name(server, str(listed.name))
    if len(name) > MAX_NAME_CHARS or not listed.name:
        raise ValueError(f"{name} is longer than the {MAX_NAME_CHARS} characters a tool name may have")
    schema = listed.input_schema
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise ValueError("its input schema is not a JSON Schema of an object")
    try:
        written = json.dumps(schema, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        raise ValueError("its input schema is not JSON") from None
    if len(written) > MAX_SCHEMA_CHARS:
        raise ValueError(f"its input schema is over {MAX_SCHEMA_CHARS:,} characters")
    properties = schema.get("properties")
    refused = (
        [key for key in properties if not API_PROPERTY_NAME.fullmatch(key)]
        if isinstance(properties, dict)
        else []
    )
    if refused:
        names = ", ".join(repr(visible_text(key)[:40]) for key in refused[:3])
        raise ValueError(f"the model's API refuses its input names ({names}: letters, digits, _ . - only)")
    try:
        validator_class = validator_for(schema)
        validator_class.check_schema(schema)
        validator = validator_class(schema)
    except (SchemaError, TypeError, RecursionError) as error:
        raise ValueError(
            f"its input schema is not valid JSON Schema ({str(error).splitlines()[0][:120]})"
        ) from None
    text = (listed.description or listed.title or "").strip() or "(no description)"
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[: MAX_DESCRIPTION_CHARS - 1] + "…"
    description = wrap(DESCRIPTION_TAG, text, server=server)
    definition = {"name": name, "description": description, "input_schema": _inert(encodable_value(schema))}
    read_only = getattr(listed.annotations, "read_only_hint", None) is True
    return McpTool(name, server, str(listed.name), definition, validator, text, read_only)


def _inert(node: Any) -> Any:
    """A schema whose texts (descriptions, titles, examples) cannot fake a reminder."""
    if isinstance(node, dict):
        return {key: _inert(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_inert(value) for value in node]
    return neutralize(node, REMINDER_TAG) if isinstance(node, str) else node


def _problem(error: Any) -> str:
    where = "/".join(str(part) for part in error.absolute_path)
    return (f"at {where}: " if where else "") + str(error.message)[:300]


def _shown(listed: Any) -> str:
    return repr(visible_text(str(getattr(listed, "name", "?")))[:60])
