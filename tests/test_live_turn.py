"""A turn as the terminal shows it (a pyte screen fed everything the program printed): the status
line with its time and "esc to interrupt", a command's output live under it and collapsed after,
a change made without a question keeping its diff, what the user types meanwhile shown under the
reply, queued with Enter, taken back with Up, never a question's answer, and Shift+Tab cycling
the permission mode during a reply."""

from __future__ import annotations

import io
from pathlib import Path

import pexpect
import pyte

from tests.cli_harness import Cli, Terminal
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import HELD, held_reply, wait_until

COLUMNS, ROWS = 100, 40
UP = "\x1b[A"
SHIFT_TAB = "\x1b[Z"
ACCEPT_EDITS_LINE = "⏵⏵ accept edits on (shift+tab to cycle)"
WRITE_A = {"file_path": "a.txt", "content": "a"}


class Screen:
    """What a terminal of COLUMNS × ROWS shows after everything the program printed so far."""

    def __init__(self, term: Terminal) -> None:
        self.term = term
        self.log = io.StringIO()
        term.child.logfile_read = self.log

    def lines(self) -> list[str]:
        screen = pyte.Screen(COLUMNS, ROWS)
        pyte.Stream(screen).feed(self.log.getvalue())
        return [line.rstrip() for line in screen.display]

    def text(self) -> str:
        return "\n".join(self.lines())

    def shows(self, text: str) -> bool:
        """Whether `text` comes on screen within a while (reading what the program prints meanwhile)."""

        def read_and_look() -> bool:
            self.term.child.expect([pexpect.TIMEOUT], timeout=0.05)
            return text in self.text()

        return wait_until(read_and_look, 15, 0.01)


def test_typing_during_a_reply_is_shown_queued_and_taken_back(cli: Cli, api_env: FakeAnthropic) -> None:
    held = held_reply("tick " * 50)
    api_env.stream_replies.extend([held, text_reply("Answered the queued one.")])
    with cli.terminal(columns=COLUMNS, rows=ROWS) as term:
        screen = Screen(term)
        term.wait_until_ready()
        term.submit("count slowly")
        term.expect("tick tick")
        term.type_and_wait_until_read("first thought\rsecond thought\rhalf typed")
        assert screen.shows("  > half typed▏")
        lines = screen.lines()
        assert "  ↳ queued: first thought" in lines and "  ↳ queued: second thought" in lines
        assert any("esc to interrupt" in line for line in lines)  # the status line stays under the text
        term.type_and_wait_until_read("\x15" + UP)  # Ctrl+U clears the line, Up takes the last back
        assert screen.shows("  > second thought▏")
        assert "  ↳ queued: second thought" not in screen.lines()
        held.release.set()
        term.expect("Answered the queued one.")
        term.expect_prompt()
        assert screen.shows("> second thought")  # what was being typed waits in the prompt
        assert not any("queued:" in line for line in screen.lines())  # the live lines are gone
    assert api_env.requests[-1].messages[-1]["content"][0]["text"] == "first thought"


def test_the_spinner_says_how_long_and_how_to_stop(cli: Cli, api_env: FakeAnthropic) -> None:
    held = held_reply("x", held=True)
    api_env.stream_replies.append(held)
    with cli.terminal(columns=COLUMNS, rows=ROWS) as term:
        screen = Screen(term)
        term.wait_until_ready()
        term.submit("hello")
        assert screen.shows("Thinking… (")
        [status] = [line for line in screen.lines() if "Thinking…" in line]
        assert status.endswith("s · esc to interrupt)")
        held.release.set()
        term.expect_prompt()


def test_a_commands_output_shows_live_then_collapsed(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    command = "seq 1 12; echo waiting; while [ ! -e go ]; do sleep 0.05; done; echo finished"
    api_env.stream_replies.extend([tool_reply("run_shell", {"command": command}), text_reply("Ran it.")])
    with cli.terminal("--permission-mode", "bypass", columns=COLUMNS, rows=ROWS) as term:
        screen = Screen(term)
        term.wait_until_ready()
        term.submit("run it")
        assert screen.shows("    waiting")
        lines = screen.lines()
        status = next(index for index, line in enumerate(lines) if "run_shell(seq 1 12" in line)
        assert "esc to interrupt" in lines[status] and lines[status + 1].startswith("  ⎿ ")
        assert lines[status + 1 : status + 6] == ["  ⎿ 9", "    10", "    11", "    12", "    waiting"]
        (project_dir / "go").touch()
        term.expect("Ran it.")
        term.expect_prompt()
        text = screen.text()
        assert "● run_shell(seq 1 12" in text and "→ exit 0" in text
        assert "    1\n    2\n    3\n    … +11 lines (ctrl+o to see all)" in text
        assert "esc to interrupt" not in text


def test_an_edit_made_without_a_question_keeps_its_diff(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "app.py").write_text("version = 1\nname = 'x'\n")
    edit = {"file_path": "app.py", "old_string": "version = 1", "new_string": "version = 2"}
    api_env.stream_replies.extend(
        [
            tool_reply("edit_file", edit),
            text_reply("Bumped."),
            tool_reply("edit_file", {**edit, "old_string": "version = 2", "new_string": "version = 3"}),
            text_reply("Again."),
        ]
    )
    with cli.terminal("--permission-mode", "accept-edits", columns=COLUMNS, rows=ROWS) as term:
        screen = Screen(term)
        term.wait_until_ready()
        term.submit("bump it")
        term.expect("Bumped.")
        term.expect_prompt()
        assert "● edit_file(app.py) → 1 replacement\n    - version = 1\n    + version = 2" in screen.text()


def test_an_edit_whose_question_showed_the_diff_does_not_show_it_again(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "app.py").write_text("version = 1\n")
    edit = {"file_path": "app.py", "old_string": "version = 1", "new_string": "version = 2"}
    api_env.stream_replies.extend([tool_reply("edit_file", edit), text_reply("Bumped.")])
    with cli.terminal(columns=COLUMNS, rows=ROWS) as term:
        screen = Screen(term)
        term.wait_until_ready()
        term.submit("bump it")
        term.expect(r"\[y\]es, \[a\]lways, \[n\]o:")
        term.type("y")
        term.expect("Bumped.")
        term.expect_prompt()
        text = screen.text()
    assert text.count("+ version = 2") == 1  # in the question, not under the tool line again
    assert "● edit_file(app.py) → 1 replacement\n\nBumped." in text


def test_shift_tab_during_a_reply_cycles_the_mode_and_the_live_lines_say_which(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    write = tool_reply("write_file", WRITE_A, text="Writing a.txt now.", **HELD)
    api_env.stream_replies.extend([write, text_reply("Written.")])
    with cli.terminal(columns=COLUMNS, rows=ROWS) as term:
        screen = Screen(term)
        term.wait_until_ready()
        term.submit("write a.txt")
        term.expect("Writ")
        term.type_and_wait_until_read(SHIFT_TAB + "half")
        assert screen.shows(ACCEPT_EDITS_LINE)
        lines = screen.lines()
        assert lines.index(ACCEPT_EDITS_LINE) == lines.index("  > half▏") + 1  # under what is typed
        write.release.set()
        term.expect("Written.")  # accept-edits now: no question
        term.expect_prompt()
        assert screen.shows("> half")
    assert (project_dir / "a.txt").read_text() == "a"
    assert "Allow write_file" not in screen.text()


def test_what_is_typed_when_a_question_appears_is_not_its_answer(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    write = tool_reply("write_file", WRITE_A, text="Writing a.txt now.", **HELD)
    api_env.stream_replies.extend([write, text_reply("Written.")])
    with cli.terminal(columns=COLUMNS, rows=ROWS) as term:
        screen = Screen(term)
        term.wait_until_ready()
        term.submit("write a.txt")
        term.expect("Writ")
        term.type_and_wait_until_read("yes, and n")  # every answer's key, typed for the next message
        write.release.set()
        term.expect(r"\[y\]es, \[a\]lways, \[n\]o:")  # shown once it takes keys
        term.child.expect([pexpect.TIMEOUT], timeout=0.5)  # time for keys it might have taken
        assert not (project_dir / "a.txt").exists()
        assert "came too soon" not in screen.text()  # no typed key even reached it
        term.type("y")
        term.expect("Written.")
        term.expect_prompt()
        assert screen.shows("> yes, and n")  # the line being typed waits in the prompt, unsent
    assert (project_dir / "a.txt").read_text() == "a"
    assert len(api_env.requests) == 2
