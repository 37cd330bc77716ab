"""What the REPL leaves on a real pseudo-terminal: tool lines after Ctrl+C, output under NO_COLOR."""

from __future__ import annotations

from pathlib import Path

from tests.cli_harness import Cli, colour_codes, strip_ansi
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import wait_for_file


def test_ctrl_c_on_a_running_command_leaves_its_line_marked_interrupted(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    command = "echo start > started; sleep 30; echo end"
    api_env.stream_replies.extend([tool_reply("run_shell", {"command": command}), text_reply("Next answer.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("run the slow thing")
        term.expect(r"\[n\]o:")
        term.submit("y")
        wait_for_file(project_dir / "started")
        term.ctrl("c")
        shown = term.expect("Interrupted.")
        term.expect_prompt()
    assert f"✗ run_shell({command}) → interrupted" in shown


MARKDOWN_REPLY = (
    "## Plan UNIQUE-HEADING\n\nFirst, **read** the code.\n\n```python\ndef f():\n    return 1\n```\n\nDone.\n"
)


def test_no_color_renders_markdown_without_colour(cli: Cli, api_env: FakeAnthropic) -> None:
    cli.env["NO_COLOR"] = "1"
    api_env.stream_replies.append(text_reply(MARKDOWN_REPLY, chunk_size=4, delta_delay=0.005))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("make a plan")
        term.child.expect("Done\\.")
        raw = term.child.before or ""
        term.expect_prompt()
    shown = strip_ansi(raw)
    assert "Plan UNIQUE-HEADING" in shown and "## Plan" not in shown, "markdown is rendered"
    assert "```" not in shown and "return 1" in shown
    assert "\x1b[1m" in raw or "\x1b[1;" in raw, "bold is not colour: it stays"
    assert colour_codes(raw) == []
