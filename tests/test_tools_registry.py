"""The registry: definitions from prompts/tools.toml, input checking, and failures as is_error results."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.safety.permissions import Permissions
from mini_claude.tools.base import ToolContext, ToolResult
from mini_claude.tools.calls.short_forms import MAX_CHARS as ERROR_SUMMARY_CHARS
from mini_claude.tools.registry import ToolRegistry, default_registry

CONTRACT = {
    "read_file": (["file_path"], ["file_path", "offset", "limit"]),
    "write_file": (["file_path", "content"], ["file_path", "content"]),
    "edit_file": (
        ["file_path", "old_string", "new_string"],
        ["file_path", "old_string", "new_string", "replace_all"],
    ),
    "list_files": (["pattern"], ["pattern", "path"]),
    "grep_search": (["pattern"], ["pattern", "path", "include"]),
    "run_shell": (["command"], ["command", "timeout"]),
    "exit_plan_mode": (["plan"], ["plan"]),
    "web_fetch": (["url"], ["url", "prompt"]),
}


@pytest.fixture
def ctx(project_dir: Path) -> ToolContext:
    return ToolContext(project_dir.resolve(), Permissions(project_dir, mode="bypass", ask=None))


def test_every_definition_has_a_handler_and_follows_the_contract() -> None:
    registry = default_registry()
    definitions = registry.definitions()
    assert [d["name"] for d in definitions] == list(CONTRACT)
    assert {d["name"] for d in prompts.load_toml("tools.toml")["tool"]} == set(registry.names)
    for definition in definitions:
        required, properties = CONTRACT[definition["name"]]
        schema = definition["input_schema"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert schema["required"] == required
        assert list(schema["properties"]) == properties
        assert all(spec["description"] for spec in schema["properties"].values())
        assert len(definition["description"]) > 200
        assert "{{" not in str(definition), "a limit placeholder was left unfilled"


def test_descriptions_quote_the_real_limits() -> None:
    by_name = {d["name"]: d for d in default_registry().definitions()}
    assert "2000 lines and 256 KB" in by_name["read_file"]["description"]
    assert "default 120, at most 600" in by_name["run_shell"]["description"]
    assert "node_modules" in by_name["list_files"]["description"]
    assert "(at most 5); at most 5 MB is read, within 30 s" in by_name["web_fetch"]["description"]


def test_definitions_are_copies(ctx: ToolContext) -> None:
    registry = default_registry()
    registry.definitions()[0]["input_schema"]["required"].append("bogus")
    assert registry.definitions()[0]["input_schema"]["required"] == ["file_path"]


def test_mismatched_handlers_are_refused_at_build_time() -> None:
    definition = {"name": "a", "description": "d", "input_schema": {"type": "object"}}
    with pytest.raises(ValueError, match="no handler for \\['a'\\]"):
        ToolRegistry([definition], {})
    with pytest.raises(ValueError, match="no definition for \\['b'\\]"):
        ToolRegistry([definition], {"a": lambda ctx: None, "b": lambda ctx: None})


def test_unknown_tool(ctx: ToolContext) -> None:
    result = default_registry().run("delete_everything", {}, ctx)
    assert result.is_error
    assert result.content.startswith("There is no tool named delete_everything. Available tools: read_file,")


@pytest.mark.parametrize(
    ("tool_input", "problem"),
    [
        ({}, "missing required parameter 'file_path'"),
        ({"file_path": 3}, "parameter 'file_path' must be string, got integer"),
        ({"file_path": "a", "offset": "10"}, "parameter 'offset' must be integer, got string"),
        ({"file_path": "a", "offset": True}, "parameter 'offset' must be integer, got boolean"),
        ({"file_path": "a", "offset": 0}, "parameter 'offset' must be at least 1, got 0"),
        ({"file_path": "a", "lines": 5}, "unknown parameter 'lines'"),
        (["a"], "the input must be a JSON object, got array"),
    ],
)
def test_input_that_breaks_the_schema_says_what_is_wrong(
    ctx: ToolContext, tool_input: object, problem: str
) -> None:
    result = default_registry().run("read_file", tool_input, ctx)
    assert result.is_error
    assert result.content.startswith(f"Invalid input for read_file: {problem}.")
    assert "file_path (string, required), offset (integer), limit (integer)" in result.content


def failing_registry(error: BaseException) -> ToolRegistry:
    def handler(ctx: ToolContext, **_: object) -> ToolResult:
        raise error

    definition = {"name": "boom", "description": "d", "input_schema": {"type": "object", "properties": {}}}
    return ToolRegistry([definition], {"boom": handler})


def test_tool_error_becomes_an_error_result(ctx: ToolContext) -> None:
    result = failing_registry(ToolError("the file moved\nsecond line")).run("boom", {}, ctx)
    assert result == ToolResult("the file moved\nsecond line", "the file moved", is_error=True)


def test_an_errors_first_line_is_its_summary_whole_up_to_a_bound(ctx: ToolContext) -> None:
    reason = (
        "Memory not saved: cannot use the memory directory /tmp/nc-home/.mini-claude/projects/" + "a" * 80
    )
    result = failing_registry(ToolError(f"{reason}\nWhat to do next.")).run("boom", {}, ctx)
    assert result.summary == reason

    endless = failing_registry(ToolError("why " * 500)).run("boom", {}, ctx)
    assert len(endless.summary) == ERROR_SUMMARY_CHARS and endless.summary.endswith("…")


def test_an_errors_summary_cannot_act_on_the_terminal(ctx: ToolContext) -> None:
    result = failing_registry(ToolError("cannot read erase\x1b[2K\u202e.txt")).run("boom", {}, ctx)
    assert result.summary == "cannot read erase\\x1b[2K\\u202e.txt"


def test_unexpected_exception_becomes_an_internal_error_and_is_logged(
    ctx: ToolContext, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="mini_claude"):
        result = failing_registry(ValueError("bad state")).run("boom", {}, ctx)
    assert result.is_error
    assert result.content.startswith("internal error in boom: ValueError: bad state")
    assert "tool boom failed" in caplog.text and "ValueError" in caplog.text


def test_keyboard_interrupt_escapes(ctx: ToolContext) -> None:
    with pytest.raises(KeyboardInterrupt):
        failing_registry(KeyboardInterrupt()).run("boom", {}, ctx)


def test_summarize_call_picks_the_main_argument_and_shortens_it() -> None:
    registry = default_registry()
    long_path = "src/" + "deep/" * 30 + "module.py"
    assert registry.summarize_call("read_file", {"file_path": "a.py", "offset": 3}) == "a.py"
    summary = registry.summarize_call("read_file", {"file_path": long_path})
    assert len(summary) == 80 and summary.startswith("…") and summary.endswith("deep/module.py")
    command = registry.summarize_call("run_shell", {"command": "pytest -q\n  && echo " + "x" * 200})
    assert command.startswith("pytest -q ⏎ && echo x") and command.endswith("x …") and len(command) <= 80
    assert registry.summarize_call("grep_search", {"pattern": "def main", "path": "src"}) == "def main"
    assert registry.summarize_call("list_files", "not a dict") == ""


def test_an_error_written_for_the_model_shows_the_user_its_short_form(ctx: ToolContext) -> None:
    binary = prompts.notice("file_binary", path="logo.png")
    result = failing_registry(ToolError(binary)).run("boom", {}, ctx)
    assert result.content == binary and result.summary == "a binary file: not shown"

    advice = "File not found: src/a.py. Check the spelling, or find it with list_files."
    assert failing_registry(ToolError(advice)).run("boom", {}, ctx).summary == "File not found: src/a.py"
