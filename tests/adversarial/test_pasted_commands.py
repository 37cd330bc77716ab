"""A `!` command of more than one line is shown whole and runs only after a one-key yes: a pasted
notebook cell starting with `!` ran as a multi-line script with no question. Driven in a real
terminal (bracketed paste, as terminals send a paste); the layout is the permission question's
(`ui/questions/permission_question.py`), the answer the one-key question's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.cases import case
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply

QUESTION = r"\[y\]es, \[n\]o(, \[v\]iew all)?:"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def paste_and_answer(cli: Cli, text: str, answer: str, *, rows: int = 40) -> str:
    """Paste `text` at the prompt, press Enter, answer the question with `answer`; returns what
    the question showed."""
    with cli.terminal(columns=100, rows=rows) as term:
        term.wait_until_ready()
        term.type(PASTE_START + text + PASTE_END)
        term.submit("")
        shown = term.expect(QUESTION)
        term.type(answer)
        if answer != "y":
            term.expect("Not run.")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0
    return shown[shown.rindex("Allow !command") :]


NOTEBOOK_CELL = "!pip download evil-package\nimport os\nos.system('touch pwned')\n"


@case(
    "terminal",
    "a pasted notebook cell starting with `!`: shown whole, every line numbered; 'n' → nothing runs",
)
@pytest.mark.parametrize("answer", ["n", "\x1b"], ids=["no", "esc"])
def test_a_pasted_cell_asks_and_no_runs_nothing(cli: Cli, project_dir: Path, answer: str) -> None:
    cell = "!touch first.txt\ntouch second.txt\ntouch third.txt"

    shown = paste_and_answer(cli, cell, answer)

    assert "Allow !command to run this 3-line command?" in shown
    for number, line in enumerate(["touch first.txt", "touch second.txt", "touch third.txt"], 1):
        assert f"{number} │ {line}" in shown
    assert sorted(p.name for p in project_dir.iterdir()) == []


@case(
    "terminal",
    "the same paste answered 'y': every line runs, as one script, and its output goes with the next message",
)
def test_a_pasted_cell_runs_after_yes(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    paste_and_answer(cli, "!touch first.txt\ntouch second.txt", "y")
    assert sorted(p.name for p in project_dir.iterdir()) == ["first.txt", "second.txt"]


@case("terminal", "a notebook cell with Python after the `!` line: asked, not run as shell")
def test_a_notebook_cell(cli: Cli, project_dir: Path) -> None:
    shown = paste_and_answer(cli, NOTEBOOK_CELL, "n")
    assert "3-line command" in shown and "3 │ os.system('touch pwned')" in shown
    assert not (project_dir / "pwned").exists()


@case(
    "terminal",
    "ways around: an empty first line, blank lines hiding the payload, a line break inside quotes, a "
    "backslash continuation: each asks, shows the payload; 'n' → not run",
)
@pytest.mark.parametrize(
    "text",
    [
        "!\ntouch pwned",
        "!echo hello" + "\n" * 60 + "touch pwned",
        "!echo 'a\ntouch pwned'; touch pwned",
        "!echo a \\\ntouch pwned; touch pwned",
        "!echo hi\n\u200btouch pwned\u202e",
    ],
    ids=["empty_first_line", "sixty_blank_lines", "break_in_quotes", "continuation", "invisible_characters"],
)
def test_ways_around_still_ask(cli: Cli, project_dir: Path, text: str) -> None:
    shown = paste_and_answer(cli, text, "n", rows=24)
    assert "touch pwned" in shown  # the payload is on screen, whatever hid it
    assert "\u200b" not in shown and "\u202e" not in shown
    assert not (project_dir / "pwned").exists()


@case("terminal", "one line with a line break only at its end (as Enter adds): runs without a question")
def test_one_line_and_its_trailing_break_do_not_ask(cli: Cli, project_dir: Path) -> None:
    with cli.terminal() as term:
        term.wait_until_ready()
        term.type(PASTE_START + "!touch one.txt\n\n" + PASTE_END)
        term.submit("")
        term.expect("the output goes with your next message")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0
    assert (project_dir / "one.txt").exists()


@case("terminal", "a several-line `!` command given as the first message on the command line: asked the same")
def test_a_first_message_of_several_lines_asks(cli: Cli, project_dir: Path) -> None:
    with cli.terminal("!touch a.txt\ntouch pwned") as term:
        term.expect(r"Allow !command to run this 2-line command\?")
        term.expect(QUESTION)
        term.type("n")
        term.expect("Not run.")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0
    assert not (project_dir / "pwned").exists() and not (project_dir / "a.txt").exists()


@case("terminal", "a pasted cell answered 'n', then a message: the model never sees the cell's output")
def test_a_refused_cell_sends_nothing(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    api_env.stream_replies.append(text_reply("Understood."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.type(PASTE_START + "!echo SECRET-OUTPUT-91\necho more" + PASTE_END)
        term.submit("")
        term.expect(QUESTION)
        term.type("n")
        term.expect("Not run.")
        term.expect_prompt()
        term.submit("hello")
        term.expect("Understood.")
        term.expect_prompt()
    assert "SECRET-OUTPUT-91" not in str(api_env.requests[-1].body)
