"""Keys in a real pseudo-terminal: Esc stops a reply or a tool as Ctrl+C does (and an arrow key
or a paste does not), Alt+Enter and `\\`+Enter insert line breaks, permission questions take
one key and show what a write will change, and --plain keeps colour out of menus."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mini_claude.ui.repl.turn_keys import ESCAPE_WAIT_S
from tests.cli_harness import Cli, colour_codes, strip_ansi
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import HELD, held_reply, wait_for_file

ESC = "\x1b"
QUESTION = r"\[y\]es, (\[a\]lways, )?\[n\]o:"
REFUSED = "Not done: tell mini-claude what to do instead."  # a no ends the turn


def sent_texts(api_env: FakeAnthropic) -> list[str]:
    return [r.messages[-1]["content"][-1]["text"] for r in api_env.requests if r.stream and r.messages]


# --- Esc ------------------------------------------------------------------------------------------


def test_esc_mid_reply_stops_it_and_the_next_message_works(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([held_reply("tick " * 300), text_reply("Second answer.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("count slowly")
        term.expect("tick tick tick")
        term.type(ESC)
        term.expect("Interrupted.")
        term.expect_prompt()
        term.submit("something else")
        term.expect("Second answer.")
        term.expect_prompt()
    second = api_env.requests[1]
    assert second.validation_error is None
    assert len(second.messages[1]["content"][0]["text"]) < len("tick " * 300)
    assert sent_texts(api_env) == ["count slowly", "something else"]


def test_esc_mid_tool_stops_the_command_and_its_line_says_so(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    command = "echo start > started; sleep 30; echo end > ended"
    api_env.stream_replies.extend([tool_reply("run_shell", {"command": command}), text_reply("Next answer.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("run the slow thing")
        term.expect(QUESTION)
        term.type("y")
        wait_for_file(project_dir / "started")
        term.type(ESC)
        shown = term.expect("Interrupted.")
        term.expect_prompt()
        term.submit("and now?")
        term.expect("Next answer.")
    assert f"✗ run_shell({command}) → interrupted" in shown
    assert not (project_dir / "ended").exists()
    assert api_env.requests[-1].validation_error is None


def test_a_message_typed_before_esc_waits_in_the_prompt(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([held_reply("tick " * 300), text_reply("Got it.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("count slowly")
        term.expect("tick tick")
        term.type_and_wait_until_read("my next question")
        term.type(ESC)
        term.expect("Interrupted.")
        term.expect("my next question")  # back in the prompt, not sent
        term.submit("")
        term.expect("Got it.")
    assert sent_texts(api_env) == ["count slowly", "my next question"]


@pytest.mark.parametrize(
    "keys",
    ["\x1b[A", "\x1b[D\x1b[C", "\x1bOA", "\x1bb", "a paste with \x1b in it"],
    ids=["up", "left-right", "up-app-mode", "alt-b", "paste-holding-esc"],
)
def test_an_arrow_key_alt_key_or_paste_during_a_reply_is_not_an_interrupt(
    cli: Cli, api_env: FakeAnthropic, keys: str
) -> None:
    reply = held_reply("tick " * 60 + "THE END")
    api_env.stream_replies.append(reply)
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("count slowly")
        term.expect("tick tick")
        term.type_and_wait_until_read(keys)
        time.sleep(4 * ESCAPE_WAIT_S)  # time enough for an Esc taken alone to stop the reply
        reply.release.set()
        shown = term.expect("THE END")
        term.expect_prompt()
    assert "Interrupted." not in shown


# --- line breaks at the prompt --------------------------------------------------------------------


def test_alt_enter_and_backslash_enter_insert_line_breaks(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([text_reply("Three lines."), text_reply("A path.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.type("line one\x1b\r")  # Alt+Enter is Esc then Enter: a line break, not an interrupt
        term.type("line two\\\r")  # a backslash before Enter becomes the line break
        term.submit("line three")
        term.expect("Three lines.")
        term.expect_prompt()
        term.submit("C:\\Users\\ ")  # ending in a backslash: a space after it, then Enter sends it
        term.expect("A path.")
    assert sent_texts(api_env) == ["line one\nline two\nline three", "C:\\Users\\ "]


# --- permission questions: one key ----------------------------------------------------------------


def write_call(name: str, content: str = "hi\n") -> object:
    return tool_reply("write_file", {"file_path": name, "content": content})


def test_y_a_n_answer_without_enter(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    api_env.stream_replies.extend(
        [write_call("one.txt"), write_call("two.txt"), write_call("three.txt"), text_reply("Done.")]
    )
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("write three files")
        term.expect(QUESTION)
        term.type("y")
        first = term.expect(r"two\.txt")
        term.expect(QUESTION)
        term.type("a")  # always, for write_file: the third one asks no more
        rest = term.expect("Done.")
        term.expect_prompt()
    assert "[n]o: yes\n" in first and "● write_file(one.txt) → created" in first  # the answer stays shown
    assert "[n]o: always\n" in rest and "● write_file(three.txt) → created" in rest
    assert "Allow write_file" not in rest
    assert all((project_dir / name).exists() for name in ("one.txt", "two.txt", "three.txt"))


@pytest.mark.parametrize("key", ["n", "N", ESC, "\x03"], ids=["n", "N", "esc", "ctrl-c"])
def test_n_esc_and_ctrl_c_at_the_question_say_no_and_the_turn_goes_on(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, key: str
) -> None:
    api_env.stream_replies.extend([write_call("nope.txt"), text_reply("Understood, not writing it.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("write it")
        term.expect(QUESTION)
        term.type("\r")  # Enter alone answers nothing (it may be left over from typing "y⏎")
        term.type("x")  # nor does another key
        term.type(key)
        shown = term.expect(REFUSED)
        term.expect_prompt()
        assert len(api_env.requests) == 1  # the model waits for the user's word
        term.submit("leave it")
        term.expect("Understood, not writing it.")
    assert "→ permission denied" in shown and "Interrupted." not in shown
    assert not (project_dir / "nope.txt").exists()
    result = api_env.requests[1].messages[-1]["content"][0]
    assert result["is_error"] is True and "refused" in result["content"]


def test_keys_typed_during_the_reply_are_not_the_answer(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    reply = tool_reply("write_file", {"file_path": "hello.txt", "content": "hi\n"}, text="tick " * 3, **HELD)
    api_env.stream_replies.append(reply)
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("write hello.txt")
        term.expect("tick tick")
        term.type_and_wait_until_read("yes please")  # typed ahead: the start of the next message, not a "y"
        reply.release.set()
        term.expect(QUESTION)
        term.type("n")
        term.expect(REFUSED)
        term.expect("yes please")  # waiting in the next prompt
    assert not (project_dir / "hello.txt").exists()


def test_v_shows_the_whole_command_then_asks_again(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    lines = [f"echo step {n}" for n in range(1, 80)]
    lines[40] = "touch pwned"
    api_env.stream_replies.extend([tool_reply("run_shell", {"command": "\n".join(lines)}), text_reply("Ok.")])
    with cli.terminal(rows=24) as term:
        term.wait_until_ready()
        term.submit("run the script")
        first = term.expect(r"\[n\]o, \[v\]iew all:")
        assert "touch pwned" not in first
        term.type("v")
        full = term.expect(QUESTION)
        assert "41 │ touch pwned" in full
        term.type("n")
        term.expect(REFUSED)
    assert not (project_dir / "pwned").exists()


# --- what a write will change ---------------------------------------------------------------------


def test_edit_file_question_shows_the_diff(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_dir / "app.py").write_text("def f():\n    x = 1\n    return x\n")
    edit = {"file_path": "app.py", "old_string": "    x = 1", "new_string": "    x = 2\n    y = 3"}
    api_env.stream_replies.extend([tool_reply("edit_file", edit), text_reply("Edited.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("change x")
        question = term.expect(QUESTION)
        term.type("y")
        term.expect("Edited.")
    rows = [line.rstrip() for line in question.split("\n")]
    start = rows.index("  removes 1 line, adds 2 lines")
    assert rows[start : start + 6] == [
        "  removes 1 line, adds 2 lines",
        "  @@ -1,3 +1,4 @@",
        "    def f():",
        "  -     x = 1",
        "  +     x = 2",
        "  +     y = 3",
    ]
    assert (project_dir / "app.py").read_text() == "def f():\n    x = 2\n    y = 3\n    return x\n"


def test_write_file_question_shows_the_first_lines_with_escape_codes_written_out(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    content = "title\n\x1b[2J\x1b]52;c;ZXZpbA==\x07hidden\n" + "".join(f"row {n}\n" for n in range(50))
    api_env.stream_replies.extend([write_call("new.txt", content), text_reply("Not written.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("write it")
        term.child.expect(QUESTION[:-1] + r", \[v\]iew all:")  # v: the other 32 lines
        raw = term.child.before
        term.type("n")
        term.expect(REFUSED)
    shown = strip_ansi(raw)
    assert "new file: 52 lines" in shown and " 1 │ title" in shown
    assert " 2 │ \\x1b[2J\\x1b]52;c;ZXZpbA==\\x07hidden" in shown
    assert "\x1b[2J" not in raw and "\x1b]52" not in raw and "\x07" not in raw
    assert "… 32 more lines not shown: answer v to see them" in shown


# --- --plain ----------------------------------------------------------------------------------


def test_plain_mode_prints_one_progress_line_per_wait(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("The answer.", delay=1.0))
    with cli.terminal("--plain") as term:
        term.wait_until_ready()
        term.submit("hello")
        shown = term.expect("The answer.")
        term.expect_prompt()
    assert shown.count("Thinking…") == 1


@pytest.mark.parametrize("flags", [("--plain",), ()])
def test_plain_mode_menus_and_questions_have_no_colour(
    cli: Cli, api_env: FakeAnthropic, flags: tuple
) -> None:
    api_env.stream_replies.extend([write_call("x.txt", "a\n"), text_reply("Ok.")])
    with cli.terminal(*flags) as term:
        term.wait_until_ready()
        term.type("/")  # the completion menu opens as you type
        term.child.expect("Show commands and keys")
        menu = term.child.before + term.child.after
        term.type("\x7f")  # Backspace: the menu closes with the slash
        term.submit("write x")
        term.child.expect(QUESTION)
        question = term.child.before
        term.type("n")
        term.expect(REFUSED)
    if flags:
        assert colour_codes(menu) == [] and colour_codes(question) == []
    else:  # the same screens in colour: what the plain assertions would catch
        assert colour_codes(menu) != []
