"""Resuming in a real terminal: after a kill -9 mid-turn, the list of sessions driven by keys,
`/resume` inside the REPL, and what the screen shows of the conversation it goes on with."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from mini_claude.core.config import memory_project_root, project_sessions_dir
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.sessions.transcript.writer import TranscriptWriter
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, Reply, text_reply, tool_reply
from tests.kit import wait_for_file

UP, DOWN, ESC = "\x1b[A", "\x1b[B", "\x1b"
RULE = r"resumed session [0-9a-f]{12}"


def saved(project: Path, session_id: str, *texts: str, age: float = 0.0) -> Path:
    """A closed transcript of `texts` (alternately the user's and the model's), last used `age` s ago."""
    writer = TranscriptWriter(
        project_sessions_dir(project), cwd=project, project=memory_project_root(project), model="m",
        session_id=session_id,
    )  # fmt: skip
    for index, text in enumerate(texts):
        writer.add("user" if index % 2 == 0 else "assistant", [{"type": "text", "text": text}])
    writer.close()
    when = time.time() - age
    os.utime(writer.path, (when, when))
    return writer.path


@pytest.fixture
def three(project_dir: Path) -> dict[str, Path]:
    return {
        "newest": saved(project_dir, "1" * 32, "fix the login bug", "Fixed in auth.py.", age=60),
        "middle": saved(project_dir, "2" * 32, "why is CI red on main?", "A flaky test.", age=3600),
        "oldest": saved(project_dir, "3" * 32, "plan the deploy of payments", "Thursday.", age=86_400 * 3),
    }


def test_kill_9_during_a_tool_call_then_continue(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    api_env.stream_replies.append(
        tool_reply(
            "run_shell", {"command": "echo $$ > shell.pid; exec sleep 30"}, text="Waiting.", id="toolu_sleepy"
        )
    )
    with cli.terminal("--permission-mode", "bypass") as term:
        term.wait_until_ready()
        term.submit("wait for the build")
        term.expect(r"run_shell\(echo")  # the call is running: its spinner is on screen
        wait_for_file(project_dir / "shell.pid")
        term.child.kill(signal.SIGKILL)
        term.wait_exit()
    with contextlib.suppress(ProcessLookupError, ValueError):
        os.killpg(int((project_dir / "shell.pid").read_text()), signal.SIGKILL)  # the orphaned sleep

    api_env.stream_replies.append(text_reply("The build was interrupted; shall I retry?"))
    with cli.terminal("-c") as term:
        shown = term.expect(RULE)
        assert "wait for the build" in shown and "Waiting." in shown
        assert "✗ run_shell(echo $$ > shell.pid; exec sleep 30)" in shown  # answered: it was cut off
        term.expect_prompt()
        term.submit("what happened?")
        term.expect("shall I retry?")
        term.expect_prompt()
    request = api_env.requests[-1]
    assert request.validation_error is None
    [answer] = [b for b in request.messages[2]["content"] if b.get("type") == "tool_result"]
    assert answer["tool_use_id"] == "toolu_sleepy" and answer["is_error"] is True
    assert "The session ended" in answer["content"]
    assert request.messages[-1]["content"][-1]["text"] == "what happened?"


def test_the_screen_shows_the_last_exchanges_and_where_they_end(cli: Cli, project_dir: Path) -> None:
    texts = [text for n in range(5) for text in (f"question number {n}", f"answer number {n}")]
    saved(project_dir, "4" * 32, *texts)

    with cli.terminal("-c") as term:
        shown = term.expect(RULE + r" · 10 messages")
        term.expect_prompt()
    assert "… 4 earlier messages" in shown
    assert "question number 0" not in shown and "answer number 1" not in shown
    for n in (2, 3, 4):
        assert f"> question number {n}" in shown and f"answer number {n}" in shown
    assert shown.index("question number 2") < shown.index("answer number 4") < len(shown)


def test_the_list_is_filtered_by_typing_and_resumes_the_session_chosen(
    cli: Cli, api_env: FakeAnthropic, three: dict[str, Path]
) -> None:
    api_env.stream_replies.append(text_reply("On Thursday, as planned."))
    with cli.terminal("-r") as term:
        listed = term.expect(r"1/3")
        for first in ("fix the login bug", "why is CI red on main?", "plan the deploy of payments"):
            assert first in listed
        term.type("deploy\r")  # keys are handled in order: Enter picks from the filtered list
        shown = term.expect(RULE)
        assert "plan the deploy of payments" in shown and "Thursday." in shown
        term.expect_prompt()
        term.submit("is it still on?")
        term.expect("as planned")
        term.expect_prompt()
    assert len(load_transcript(three["oldest"]).messages) == 4  # it went on in its own file


def test_arrow_keys_choose_and_esc_cancels(cli: Cli, three: dict[str, Path]) -> None:
    with cli.terminal("-r") as term:
        term.expect(r"1/3")  # (later redraws write only what changed: "3", not "3/3")
        term.type(DOWN + DOWN + DOWN + UP + "\r")  # down to the last, one past it (nothing), up
        shown = term.expect(RULE)
        # From the banner on: the list may be drawn again in full after "1/3" on a busy machine.
        resumed = shown[shown.rindex("mini-claude ") :]
        assert "why is CI red on main?" in resumed and "fix the login bug" not in resumed
        assert term.child.after.endswith("222222222222")  # the rule names the chosen session
    with cli.terminal("-r") as term:
        term.expect(r"1/3")
        term.type(ESC)
        term.expect("No session resumed.")
        assert term.wait_exit() == 130
    with cli.terminal("-r") as term:
        term.expect(r"1/3")
        term.ctrl("c")
        term.expect("No session resumed.")
        assert term.wait_exit() == 130


def test_the_list_fits_40_columns(cli: Cli, project_dir: Path) -> None:
    for n in range(30):
        saved(
            project_dir,
            f"{n:02d}" + "5" * 30,
            f"session number {n} about a rather long topic",
            "ok",
            age=n * 60,
        )

    with cli.terminal("-r", columns=40, rows=15) as term:
        listed = term.expect(r"1/30")
        assert "›    now    2  session number 0 about …" in listed  # the row, cut to fit
        assert "session number 12" not in listed  # the rest waits below the screen
        term.type("\x1b[6~" + "number 29\r")  # Page Down, then a filter
        shown = term.expect(RULE.replace("session [0-9a-f]{12}", "·"))  # the short rule at this width
        assert "session number 29" in shown


def test_resume_inside_the_repl_by_id_and_from_the_list(
    cli: Cli, api_env: FakeAnthropic, three: dict[str, Path]
) -> None:
    api_env.stream_replies.append(text_reply("Hello."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("a new conversation")
        term.expect("Hello.")
        term.expect_prompt()
        term.submit("/resume 22")
        shown = term.expect(RULE)
        assert "why is CI red on main?" in shown
        term.expect_prompt()
        term.submit("/resume 99")
        term.expect("No session 99 in this project; the closest: ")
        term.expect_prompt()
        term.submit("/resume")
        listed = term.expect(r"1/3")  # the conversation started here is listed; the one in use is not
        assert "a new conversation" in listed and "why is CI red" not in listed.split("Resume a session")[-1]
        term.type(ESC)
        term.expect("No session resumed.")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0


def test_resume_with_only_the_session_in_use_says_there_is_no_other(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    saved(project_dir, "4" * 32, "the only question")
    with cli.terminal("-c") as term:
        term.expect(RULE)
        term.expect_prompt()
        term.submit("/resume")
        term.expect(r"No other saved session to resume in this project\.")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0


def test_the_list_and_the_resumed_screen_show_what_the_user_typed(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    """Not mini-claude's words around a `!command`'s output or an attached file: the list shows
    and filters by the command and the text typed, the resumed screen shows them as typed."""
    (project_dir / "notes.txt").write_text("the notes\n")
    api_env.stream_replies.extend([text_reply("It fails."), text_reply("A summary."), text_reply("Again.")])
    with cli.terminal(columns=120) as term:
        term.wait_until_ready()
        term.submit("!echo some output")
        term.expect("the output goes with your next message")
        term.expect_prompt()
        term.submit("why does this fail?")
        term.expect("It fails.")
        term.expect_prompt()
        term.submit("/clear")
        term.expect_prompt()
        term.submit("summarise @notes.txt for me")
        term.expect("A summary.")
        term.expect_prompt()
        term.submit("/clear")
        term.expect_prompt()
        term.submit("/resume")
        term.expect(r"1/2")
        term.type("fail")
        filtered = term.expect(r"1/1")
        assert "!echo some output · why does this fail?" in filtered.split("Filter:")[-1]
        term.type("\r")
        shown = term.expect(RULE)
        term.expect_prompt()
        term.submit("/exit")
        term.wait_exit()
    screen = shown
    assert "> !echo some output" in screen and "> why does this fail?" in screen
    assert "The user ran" not in screen and "shell-output" not in screen
    listed = cli.run("sessions", "list").stdout
    assert "summarise @notes.txt for me" in listed and "The user attached" not in listed
    assert "!echo some output · why does this fail?" in listed


def long_story() -> Reply:
    """Three pieces of a reply, then no more until the fake closes: a kill lands mid-reply."""
    return text_reply("streamed " * 200 + "THE END", chunk_size=9, hold_after_deltas=3)


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGHUP, 129), (signal.SIGTERM, 143)])
def test_a_terminal_closed_or_a_kill_mid_reply_keeps_what_was_streamed(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, signum: int, status: int
) -> None:
    """As Ctrl+C does: the reply so far is saved, then the program exits (128 + the signal)."""
    api_env.stream_replies.append(long_story())
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("tell me a long story")
        term.expect("streamed streamed streamed")
        term.child.kill(signum)
        assert term.wait_exit() == status

    [path] = project_sessions_dir(project_dir).iterdir()
    loaded = load_transcript(path)
    assert loaded.problems == [] and [m["role"] for m in loaded.messages] == ["user", "assistant", "user"]
    reply = loaded.messages[1]["content"][0]["text"]
    assert reply.startswith("streamed streamed streamed") and "THE END" not in reply
    api_env.stream_replies.append(text_reply("Going on."))
    result = cli.run("-c", "-p", "go on")
    assert result.returncode == 0 and api_env.requests[-1].validation_error is None


def test_a_kill_mid_reply_in_print_mode_keeps_what_was_streamed(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    reply = long_story()
    api_env.stream_replies.append(reply)
    process = cli.start("-p", "tell me a long story", stdin=subprocess.DEVNULL)
    folder = project_sessions_dir(project_dir)
    assert reply.holding.wait(15)  # part of the reply is sent, and the rest waits
    time.sleep(0.3)  # for the program to read what was sent (print mode shows nothing before the end)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=15) == 143

    [path] = folder.iterdir()
    reply = load_transcript(path).messages[1]["content"][0]["text"]
    assert reply.startswith("streamed") and "THE END" not in reply
