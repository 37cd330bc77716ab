"""Modes and questions in a real terminal: Shift+Tab cycles default → accept-edits → plan, the
mode shows under the prompt (bypass most strongly), a key pressed in a question's first moment is
not its answer, a no ends the turn, and the plan question approves with one key."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pexpect

from mini_claude.ui.questions.key_answer import QUESTION_GRACE_S
from tests.adversarial.terminal_screen import screen_after
from tests.cli_harness import Cli, Terminal
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import tool_results_in

SHIFT_TAB = "\x1b[Z"
WRITE_OPTIONS = r"a = always: accept edits for this conversation[\s\S]*?\[y\]es, \[a\]lways, \[n\]o:"
PLAN_OPTIONS = (
    r"Approve the plan\? \[y\]es and accept edits, \[2\] yes and ask for each edit, \[n\]o, keep planning:"
)


COLUMNS, ROWS = 100, 40


def recording(term: Terminal) -> Terminal:
    """Keep everything `term` prints, for `mode_line_shows` to draw the screen from."""
    term.child.logfile_read = io.StringIO()
    return term


def mode_line(term: Terminal, timeout: float = 15) -> str:
    """The line under the prompt once the screen settles: the mode line, or "" when there is none.
    Drawn by a terminal emulator: the program redraws only what changed."""
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            term.child.read_nonblocking(100_000, timeout=0.3)
            continue  # more came: wait until it is quiet
        except pexpect.TIMEOUT:
            pass
        lines = screen_after(term.child.logfile_read.getvalue(), COLUMNS, ROWS)
        prompt = max(i for i, line in enumerate(lines) if line.startswith(">"))
        below = lines[prompt + 1] if prompt + 1 < len(lines) else ""
        if below == last:
            return below
        last = below
    raise AssertionError("the screen did not settle")


def answer(term, key: str) -> None:  # type: ignore[no-untyped-def]
    """Press `key` once the question takes keys (its options are shown then; this waits past it)."""
    time.sleep(QUESTION_GRACE_S)
    term.type(key)


def test_shift_tab_cycles_the_modes_and_the_line_under_the_prompt_says_which(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.append(tool_reply("write_file", {"file_path": "a.txt", "content": "a"}))
    api_env.stream_replies.append(text_reply("Written."))
    with cli.terminal(columns=COLUMNS, rows=ROWS) as term:
        recording(term).wait_until_ready()
        assert mode_line(term) == ""
        shown = []
        for _ in range(4):
            term.type(SHIFT_TAB)
            shown.append(mode_line(term))
        assert shown == [
            "⏵⏵ accept edits on (shift+tab to cycle)",
            "⏸ plan mode on: nothing changes until you approve a plan (shift+tab to cycle)",
            "",  # back to default: bypass is not in the cycle unless started in it
            "⏵⏵ accept edits on (shift+tab to cycle)",
        ]
        term.submit("write a.txt")
        term.expect("Written.")  # accept-edits: no question
        term.expect_prompt()
    assert (project_dir / "a.txt").read_text() == "a"


def test_bypass_shows_its_line_and_stays_in_the_cycle_only_when_started_in_it(cli: Cli) -> None:
    with cli.terminal("--dangerously-skip-permissions", columns=COLUMNS, rows=ROWS) as term:
        recording(term).wait_until_ready()
        shown = [mode_line(term)]
        for _ in range(4):
            term.type(SHIFT_TAB)
            shown.append(mode_line(term))
    bypass = "⚠ BYPASS PERMISSIONS ON: nothing asks first (shift+tab to cycle)"
    plan = "⏸ plan mode on: nothing changes until you approve a plan (shift+tab to cycle)"
    assert shown == [bypass, "", "⏵⏵ accept edits on (shift+tab to cycle)", plan, bypass]


def test_a_key_pressed_as_the_question_appears_is_not_its_answer(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.append(tool_reply("write_file", {"file_path": "a.txt", "content": "a"}))
    api_env.stream_replies.append(text_reply("Written."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("write a.txt")
        term.expect(r"Allow write_file to write to")
        term.type("y")  # at once: typed for something else
        term.expect(r"y came too soon after the question appeared: press it again")
        term.expect(r"\[y\]es, \[a\]lways, \[n\]o:")
        assert not (project_dir / "a.txt").exists()
        term.type("y")
        term.expect("Written.")
    assert (project_dir / "a.txt").read_text() == "a"


def test_no_ends_the_turn_and_the_model_is_not_called_again(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    api_env.stream_replies.append(tool_reply("write_file", {"file_path": "a.txt", "content": "a"}))
    api_env.stream_replies.append(text_reply("Next answer."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("write a.txt")
        term.expect(WRITE_OPTIONS)
        answer(term, "n")
        term.expect("Not done: tell mini-claude what to do instead.")
        term.expect_prompt()
        assert len(api_env.requests) == 1
        term.submit("never mind, say hi")
        term.expect("Next answer.")
    refusal = tool_results_in(api_env.requests[1])
    assert len(refusal) == 1 and "refused" in json.dumps(refusal[0])
    assert not (project_dir / "a.txt").exists()


def test_plan_question_approves_with_one_key_and_edits_follow_without_asking(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    plan = "# Plan\n\n1. Write `a.txt`\n2. Check it"
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": "early.txt", "content": "x"}),
            tool_reply("exit_plan_mode", {"plan": plan}),
            tool_reply("write_file", {"file_path": "a.txt", "content": "a"}),
            text_reply("Done as planned."),
        ]
    )
    with cli.terminal("--permission-mode", "plan", columns=COLUMNS, rows=ROWS) as term:
        recording(term).wait_until_ready()
        assert mode_line(term).startswith("⏸ plan mode on")
        term.submit("plan then do it")
        term.expect("Check it")  # the plan, rendered
        term.expect(PLAN_OPTIONS)
        answer(term, "y")
        term.expect("Done as planned.")
        assert mode_line(term) == "⏵⏵ accept edits on (shift+tab to cycle)"  # approved so
    assert not (project_dir / "early.txt").exists()  # refused in plan mode
    assert (project_dir / "a.txt").read_text() == "a"
    refused = tool_results_in(api_env.requests[1])[0]
    assert "plan mode" in json.dumps(refused)
    first = api_env.requests[0].messages[0]["content"][0]["text"]
    assert first.startswith("<system-reminder>\nPlan mode is on")


def test_keep_planning_sends_what_the_user_typed(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    api_env.stream_replies.extend(
        [tool_reply("exit_plan_mode", {"plan": "1. Rewrite everything"}), text_reply("Revised.")]
    )
    with cli.terminal("--permission-mode", "plan") as term:
        term.wait_until_ready()
        term.submit("plan it")
        term.expect(PLAN_OPTIONS)
        answer(term, "n")
        term.expect(r"What should change\?")
        term.submit("only the README")
        term.expect("Revised.")
    [result] = tool_results_in(api_env.requests[1])
    assert "only the README" in json.dumps(result)
