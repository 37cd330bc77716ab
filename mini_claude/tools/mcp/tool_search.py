"""Tool definitions on demand: past a threshold (`MINI_CLAUDE_MCP_TOOL_SEARCH`) of MCP tools,
requests carry one search tool instead of every definition, and the tools it finds join the
requests from then on (for the rest of the conversation). Sent whole, 200 tools would add their
definitions, tens of thousands of tokens, to every request."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.tools.base import ToolResult, count_noun
from mini_claude.tools.registry import filled_descriptions

if TYPE_CHECKING:
    from jsonschema.protocols import Validator


@dataclass(frozen=True)
class McpTool:
    """An MCP server's tool as ours (built by adapter.py)."""

    name: str  # ours: mcp__server__tool
    server: str
    tool: str  # as the server names it
    definition: dict[str, Any]  # name, description, input_schema: as sent to the model
    validator: Validator
    about: str  # the description as the server wrote it (searched, never shown raw)
    read_only: bool = False  # its server says it changes nothing (readOnlyHint): plan mode asks


SEARCH_TOOL = "mcp_tool_search"
DEFAULT_RESULTS = 5
MAX_RESULTS = 20
SELECT = "select:"
_WORD = re.compile(r"[a-z0-9]+")
LIMITS = {"default_results": DEFAULT_RESULTS, "max_results": MAX_RESULTS}  # quoted by its schema


class ToolSearch:
    def __init__(self, search_after: int) -> None:
        self.search_after = search_after  # more MCP tools than this: definitions on demand
        self._loaded: set[str] = set()

    def deferring(self, tool_count: int) -> bool:
        return tool_count > self.search_after

    def definitions(self, tools: Sequence[McpTool], servers: dict[str, int]) -> list[dict[str, Any]]:
        if not self.deferring(len(tools)):
            return [tool.definition for tool in tools]
        listed = ", ".join(f"{server} ({count})" for server, count in servers.items())
        spec = prompts.load_toml("mcp.toml")["search_tool"]
        description = prompts.fill(spec["description"].strip(), count=len(tools), servers=listed)
        schema = filled_descriptions(spec["input_schema"], LIMITS)
        search = {"name": SEARCH_TOOL, "description": description, "input_schema": schema}
        return [search, *(tool.definition for tool in tools if tool.name in self._loaded)]

    def forget(self) -> None:
        self._loaded.clear()

    def run(self, tool_input: dict[str, Any], tools: Sequence[McpTool]) -> ToolResult:
        query = tool_input.get("query")
        wanted = tool_input.get("max_results", DEFAULT_RESULTS)
        if not isinstance(query, str) or not query.strip():
            expected = "query (string, required), max_results (integer)"
            problem = prompts.notice("input_missing_parameter", parameter="'query'")
            raise ToolError(
                prompts.notice("invalid_tool_input", tool=SEARCH_TOOL, problem=problem, expected=expected)
            )
        if isinstance(wanted, bool) or not isinstance(wanted, int) or wanted < 1:
            wanted = DEFAULT_RESULTS
        found = matching(query, tools, min(wanted, MAX_RESULTS))
        notices = prompts.load_toml("mcp.toml")["notices"]
        if not found:
            return ToolResult(
                prompts.fill(notices["nothing_found"], query=repr(query[:200])), "no tools found"
            )
        self._loaded.update(tool.name for tool in found)
        lines = [prompts.fill(notices["found"], count=len(found))]
        lines += [f"- {tool.name}: {tool.definition['description']}" for tool in found]
        return ToolResult("\n".join(lines), f"loaded {count_noun(len(found), 'tool')}")


def matching(query: str, tools: Sequence[McpTool], limit: int) -> list[McpTool]:
    """The tools named after `select:`, else those whose names and descriptions share the most
    words with the query (a word in the name counts double)."""
    if query.strip().startswith(SELECT):
        names = {name.strip() for name in query.strip()[len(SELECT) :].split(",")}
        return [tool for tool in tools if tool.name in names][:limit]
    words = set(_WORD.findall(query.lower()))
    scored = []
    for tool in tools:
        name_words = set(_WORD.findall(tool.name.lower().replace("_", " ")))
        text_words = set(_WORD.findall(tool.about.lower()))
        score = 2 * len(words & name_words) + len(words & text_words)
        if score:
            scored.append((score, tool.name, tool))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [tool for _, _, tool in scored[:limit]]
