"""What the user sees of the context window: the line after each reply, `/context`, `/compact` and
its announcement, in a real pty (live and --plain) and in print mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.agent.context_report import PART_NAMES, context_breakdown
from mini_claude.core.config import project_memory_dir
from mini_claude.ui.render.context_view import breakdown_lines
from tests.agent_harness import Harness
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, error_reply, text_reply, tool_reply
from tests.long_conversation import is_summary_request

SUMMARY = "1. **Goals and requests**: make the parser faster."
TOO_LONG = "prompt is too long: 250000 tokens > 200000 maximum"


@pytest.mark.parametrize("flags", [(), ("--plain",)])
def test_each_reply_is_followed_by_how_full_the_context_is(
    cli: Cli, api_env: FakeAnthropic, flags: tuple[str, ...]
) -> None:
    api_env.stream_replies.extend(
        [
            text_reply("First answer.", usage={"input_tokens": 30_000, "cache_read_input_tokens": 16_000}),
            text_reply("Second answer.", usage={"input_tokens": 130_000}),
        ]
    )
    with cli.terminal(*flags) as term:
        term.wait_until_ready()
        term.submit("hello")
        shown = term.expect(r"context: \d+% of 200k tokens")
        assert "First answer." in shown
        term.expect_prompt()
        term.submit("more")
        shown = term.expect(r"compacts at 80%")
        assert "context: 65% of 200k tokens" in shown  # 130,000 + 7 output tokens
        term.expect_prompt()


def test_first_indicator_counts_cache_reads_too(cli: Cli, api_env: FakeAnthropic) -> None:
    usage = {"input_tokens": 30_000, "cache_read_input_tokens": 16_000, "output_tokens": 20}
    api_env.stream_replies.append(text_reply("First answer.", usage=usage))
    with cli.terminal("--plain") as term:
        term.wait_until_ready()
        term.submit("hello")
        term.expect(r"context: 23% of 200k tokens")  # 46,020 of 200,000


def test_context_command_shows_each_part(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_dir / "notes.txt").write_text("note\n" * 50)
    api_env.stream_replies.extend(
        [tool_reply("read_file", {"file_path": "notes.txt"}), text_reply("Read the notes.")]
    )
    with cli.terminal("--plain", columns=120) as term:
        term.wait_until_ready()
        term.submit("/context")
        shown = term.expect(r"summarises it now\.")
        assert "Nothing was counted by the server yet" in shown
        term.expect_prompt()
        term.submit("read notes.txt")
        term.expect("Read the notes.")
        term.expect_prompt()
        term.submit("/context")
        shown = term.expect(r"summarises it now\.")
    assert "Context: " in shown and "of 200,000 tokens" in shown
    for part in (*PART_NAMES, "free"):
        assert f"  {part} " in shown, part
    assert "the server's count of the last request" in shown
    assert "past 100,000 tokens (50%)" in shown and "past 160,000 (80%)" in shown


def test_compact_in_the_repl_shows_the_spinner_the_sizes_and_the_summary(
    cli: Cli, api_env: FakeAnthropic
) -> None:
    api_env.stream_replies.extend(
        [
            text_reply("One.", usage={"input_tokens": 50_000}),
            text_reply("Two.", usage={"input_tokens": 90_000}),
            summary := text_reply(SUMMARY, held=True),
            text_reply("Three."),
        ]
    )
    with cli.terminal() as term:
        term.wait_until_ready()
        for text, answer in (("one", "One."), ("two", "Two.")):
            term.submit(text)
            term.expect(answer)
            term.expect_prompt()
        term.submit("/compact the parser")
        term.expect("Compacting…")
        summary.release.set()
        shown = term.expect(r"Summary:")
        assert "Compacted the conversation: ~90k → ~" in shown
        assert "a summary now stands for its first 2 messages" in shown
        shown = term.expect_prompt()
        assert "Goals and requests" in shown
        term.submit("three")
        term.expect("Three.")
    summary_request, after = api_env.requests[-2:]
    assert is_summary_request(summary_request) and "the parser" in str(summary_request.messages[-1])
    assert SUMMARY in after.messages[0]["content"][0]["text"] and after.validation_error is None


def test_compact_and_context_lines_for_wrong_input(cli: Cli, api_env: FakeAnthropic) -> None:
    with cli.terminal("--plain") as term:
        term.wait_until_ready()
        term.submit("/compact")
        assert "Nothing to compact: the conversation is empty." in term.expect_prompt()
        term.submit("/context everything")
        assert "/context takes no argument" in term.expect_prompt()
        term.submit("/compact " + "x" * 2_500)
        assert "The focus text is 2,500 characters; keep it under 2,000." in term.expect_prompt()
    assert api_env.requests == []


def test_print_mode_compacts_when_the_server_says_too_long(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend(
        [error_reply(400, error_type="invalid_request_error", message=TOO_LONG), text_reply(SUMMARY),
         text_reply("The answer.")]
    )  # fmt: skip

    result = cli.run("-p", "a question about a huge paste")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "The answer.\n"
    assert "The server found the request too long: compacted the conversation: ~250k → ~" in result.stderr
    assert "context:" not in result.stdout + result.stderr  # the indicator is for the REPL
    retried = api_env.requests[-1]
    assert retried.validation_error is None and [m["role"] for m in retried.messages] == ["user"]


# -- the breakdown, in-process ------------------------------------------------------------------


def test_breakdown_parts_add_up_and_name_the_memory_index(api_env: FakeAnthropic, project_dir: Path) -> None:
    memory_dir = project_memory_dir(str(project_dir))
    memory_dir.mkdir(parents=True)
    (memory_dir / "user_role.md").write_text(
        "---\nname: role\ndescription: backend engineer who prefers Go\ntype: user\n---\nGo.\n"
    )
    (project_dir / "big.txt").write_text("line of text\n" * 400)
    harness = Harness().start()
    api_env.stream_replies.extend(
        [tool_reply("read_file", {"file_path": "big.txt"}), text_reply("done", usage={"input_tokens": 9_000})]
    )
    harness.turn("read big.txt")
    agent = harness.session.agent

    report = context_breakdown(agent.context.view, agent.request_parts())

    parts = dict(report.parts)
    assert report.counted and abs(sum(parts.values()) - report.total) <= len(parts)
    assert report.total >= 9_000  # the server's count, plus the reply added since
    assert parts["memory index"] > 0 and parts["tool results"] > parts["conversation"]
    assert parts["summary"] == 0 and report.summarised == 0
    lines = breakdown_lines(report)
    assert lines[0] == f"Context: {report.total:,} of 200,000 tokens ({100 * report.total / 200_000:.0f}%)"
