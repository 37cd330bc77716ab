"""The slash-command registry: /help's layout at any width, and completion of names and arguments."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

import mini_claude.ui.repl.repl  # noqa: F401  (registers every command the REPL has)
from mini_claude.ui.commands.registry import COMMANDS, CommandCompleter, close_commands, help_lines
from tests.agent_harness import Harness
from tests.cli_harness import Cli, Terminal

HEADINGS = ("Commands:", "Keys:")
# An entry's first line: two spaces, the label (single spaces inside), two or more spaces, text.
ENTRY = re.compile(r"  (\S(?:\S| (?! ))*)( {2,})\S")


@pytest.fixture
def cli(project_dir: Path) -> Cli:
    return Cli(project_dir)  # no ANTHROPIC_* settings: /help needs none


def assert_tidy(lines: list[str], width: int) -> None:
    """Every line fits; entries are indented; every description line starts in one column."""
    assert lines[0] == "Commands:" and "Keys:" in lines, lines
    description_columns = set()
    for line in lines:
        assert len(line) <= width, f"{len(line)} > {width}: {line!r}"
        if line in HEADINGS:
            continue
        assert line.startswith("  "), f"not indented under its heading: {line!r}"
        indent = len(line) - len(line.lstrip(" "))
        if indent > 2:
            description_columns.add(indent)  # a description's continuation (or one below its label)
        elif entry := ENTRY.match(line):
            description_columns.add(entry.end() - 1)
    assert len(description_columns) == 1, (description_columns, lines)


def help_in_terminal(term: Terminal) -> list[str]:
    term.expect(r"/help for commands")
    term.expect_prompt()
    term.submit("/help")
    term.expect(r"Commands:\r?\n")
    shown = "Commands:\n" + term.expect_prompt()
    return [line.rstrip() for line in shown.split("\n") if line.strip()]


@pytest.mark.parametrize(
    ("columns", "flags"), [(100, ()), (100, ("--plain",)), (40, ()), (40, ("--plain",)), (60, ("--plain",))]
)
def test_help_is_two_columns_with_hanging_indent_at_any_width(
    cli: Cli, columns: int, flags: tuple[str, ...]
) -> None:
    with cli.terminal(*flags, columns=columns) as term:
        lines = help_in_terminal(term)
    assert_tidy(lines, columns)
    assert any(line.startswith("  /memory") for line in lines)
    assert any(line.startswith("  Ctrl+C ") for line in lines)


@pytest.mark.parametrize("width", [*range(24, 121, 4), 200])
def test_help_lines_fit_every_width(width: int) -> None:
    lines = help_lines(width)
    assert_tidy(lines, width)
    words = " ".join(lines).split()
    assert "(twice" in words and "exit)" in words  # wrapped at spaces, never inside a word


def test_help_in_a_very_narrow_terminal_puts_descriptions_below_their_labels() -> None:
    lines = help_lines(30)
    assert all(len(line) <= 30 for line in lines)
    at = lines.index("  /help")
    assert lines[at + 1] == "      Show commands and keys"


def completions(completer: CommandCompleter, text: str) -> list[tuple[str, int, str]]:
    found = completer.get_completions(Document(text), CompleteEvent(text_inserted=True))
    return [(c.text, c.start_position, c.display_meta_text) for c in found]


def test_completer_offers_command_names_with_descriptions(project_dir: Path) -> None:
    completer = CommandCompleter(Harness().start().session)

    assert completions(completer, "/c") == [
        ("/clear", -2, "Start a new conversation and clear the screen"),
        ("/cost", -2, "Show the tokens used this session and what they cost"),
        ("/compact", -2, "Summarise the conversation to free context space"),
        ("/context", -2, "Show how full the context window is, part by part"),
    ]
    assert [text for text, _, _ in completions(completer, "/q")] == ["/quit"]
    assert completions(completer, "hello /c") == []
    assert completions(completer, "/model claude") == []  # no argument completer: nothing
    assert completions(completer, "/memory\nsh") == []


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [
        ("cots", ["cost"]),  # two letters swapped
        ("hlep", ["help"]),
        ("memroy", ["memory"]),
        ("memry", ["memory"]),  # one left out
        ("clearr", ["clear"]),  # one too many
        ("modle", ["model"]),
        ("exti", ["exit"]),
        ("mem", ["memory"]),  # the start of a name
        ("compact", []),  # four edits from /cost: a different command, not a slip
        ("context", []),
        ("resume", ["rename"]),  # two edits: a slip as far as the rule can tell
        ("x", []),
        ("costume", []),
        ("delete", []),
    ],
)
def test_an_unknown_command_is_only_matched_to_a_near_miss(typed: str, suggested: list[str]) -> None:
    names = [name for name in COMMANDS if name != typed]  # whichever commands exist when this runs
    assert close_commands(typed, names) == [name for name in suggested if name in names]


def test_an_unknown_command_in_the_repl_names_near_misses_only(cli: Cli) -> None:
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/cots")
        term.expect(r"Unknown command /cots\. Did you mean /cost\?")
        term.submit("/frobnicate")
        term.expect(r"Unknown command /frobnicate\. Type /help for the list\.")
        term.expect_prompt()
