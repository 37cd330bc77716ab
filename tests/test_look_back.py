"""Looking back in the REPL, driven in a terminal: Ctrl+O's transcript view, /rewind and Esc Esc,
/export, /rename."""

from __future__ import annotations

import os
from pathlib import Path

from mini_claude.core.config import project_sessions_dir
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.test_repl_keys import ESC

CTRL_O = "\x0f"


def test_ctrl_o_shows_every_tool_input_and_output_then_the_prompt_as_it_was(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("UNIQUE-FILE-LINE\n")
    api_env.stream_replies.extend(
        [
            tool_reply("read_file", {"file_path": "a.txt"}),
            text_reply("It holds one line."),
            text_reply("Yes."),
        ]
    )
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("read a.txt")
        term.expect("It holds one line.")
        term.expect_prompt()
        term.type("half typed")
        term.type(CTRL_O)
        view = term.expect("Esc or q back to the prompt")
        assert '"file_path": "a.txt"' in view and "UNIQUE-FILE-LINE" in view and "> read a.txt" in view
        term.type_and_wait_until_read("x\r")  # keys the view does not use: no bell, no effect
        term.type("q")
        back = term.expect("half typed")  # the prompt is back, with what was typed in it
        assert "\x07" not in back, repr(term.child.before)
        term.submit(" and more")
        term.expect("Yes.")
        term.expect_prompt()
    assert api_env.requests[-1].messages[-1]["content"][-1]["text"] == "half typed and more"


def test_esc_esc_rewinds_the_code_and_the_conversation(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    app = project_dir / "app.py"
    app.write_text("version = 1\n")
    api_env.stream_replies.extend(
        [
            tool_reply("edit_file", {"file_path": "app.py", "old_string": "1", "new_string": "2"}),
            text_reply("Bumped."),
            text_reply("Fresh start."),
        ]
    )
    with cli.terminal("--permission-mode", "accept-edits") as term:
        term.wait_until_ready()
        term.submit("bump the version")
        term.expect("Bumped.")
        term.expect_prompt()
        assert app.read_text() == "version = 2\n"
        term.type(ESC + ESC)
        term.expect("Rewind to just before which message")
        term.expect("bump the version · 1 file changed")
        term.type("\r")
        term.expect("code: 1 file goes back \\(app.py\\)")
        term.expect("Restore: 1 code and conversation")
        term.type("1")
        term.expect("Restored 1 file")
        term.expect("Your message is back in the prompt")
        term.expect("bump the version")  # in the prompt, to edit
        assert app.read_text() == "version = 1\n"
        term.submit(" again")
        term.expect("Fresh start.")
        term.expect_prompt()
    last = api_env.requests[-1]
    assert [m["content"][-1].get("text") for m in last.messages] == ["bump the version again"]


def test_rewind_with_nothing_said_says_so(cli: Cli) -> None:
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/rewind")
        term.expect("Nothing to rewind to")
        term.expect_prompt()


def test_export_writes_the_conversation_as_markdown(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("has ``` inside\n")
    api_env.stream_replies.extend([tool_reply("read_file", {"file_path": "a.txt"}), text_reply("Read it.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("read a.txt")
        term.expect("Read it.")
        term.expect_prompt()
        term.submit("/export notes/chat.md")
        term.expect("there is no folder")
        (project_dir / "notes").mkdir()
        term.submit("/export notes/chat.md")
        term.expect("Exported the conversation \\(4 messages\\) to notes/chat.md")
        term.submit("/export notes/chat.md")
        term.expect("exists. Replace it\\?")
        term.type("n")
        term.expect("Not exported.")
        term.expect_prompt()
    exported = project_dir / "notes" / "chat.md"
    text = exported.read_text()
    assert text.startswith("# mini-claude conversation ")
    assert "## You\n\nread a.txt" in text and "## mini-claude" in text and "Read it." in text
    assert "**● read_file(a.txt)**" in text and "````text\n" in text  # a fence longer than the file's
    assert os.stat(exported).st_mode & 0o777 == 0o600


def test_rename_names_the_session_in_the_lists(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    api_env.stream_replies.append(text_reply("ok"))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("hello")
        term.expect("ok")
        term.expect_prompt()
        term.submit("/rename release prep")
        term.expect("is now named release prep")
        term.submit("/rename")
        term.expect("This session is named release prep")
        term.expect_prompt()
    listed = cli.run("sessions", "list")
    assert "release prep · hello" in listed.stdout
    [side] = [p for p in project_sessions_dir(project_dir).iterdir() if p.is_dir()]
    assert side.stat().st_mode & 0o777 == 0o700
