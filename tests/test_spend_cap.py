"""The spend cap (--max-cost, maxCostUsd) against the fake server's reported usage, at the default
model's list price ($2 in, $10 out per million tokens): a call that could pass the cap is not
made, a turn stops once a call did, print mode exits 7, and a model without a price is said to
escape the cap."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mini_claude.core.events import Notice
from tests.agent_harness import Harness
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import main_calls

# $0.05 at the default model's price; the next call's worst case (16,000 tokens out) is $0.16 more.
READ_USAGE = {"input_tokens": 20_000, "output_tokens": 1_000}
BEFORE_CALL = re.compile(
    r"Stopped: the next model call could cost up to \$0\.\d\d, "
    r"past the spend cap of \$0\.20 \(\$0\.05 spent\)\."
)


def test_the_second_call_of_a_tool_loop_is_not_made_past_the_cap(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("apple\n")
    api_env.stream_replies.extend([tool_reply("read_file", {"file_path": "a.txt"}, usage=READ_USAGE)])

    result = cli.run("-p", "--max-cost", "0.20", "what does a.txt say?")

    assert result.returncode == 7, result.stderr
    assert len(main_calls(api_env)) == 1  # the first call fitted; the second could not
    assert "● read_file(a.txt)" in result.stderr  # the first reply's tool call ran
    assert BEFORE_CALL.search(result.stderr), result.stderr
    assert result.stdout == ""


def test_json_names_the_ending_and_the_exit_code(cli: Cli, api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_dir / "a.txt").write_text("apple\n")
    api_env.stream_replies.append(tool_reply("read_file", {"file_path": "a.txt"}, usage=READ_USAGE))

    result = cli.run("-p", "--max-cost", "$0.20", "--output-format", "json", "what does a.txt say?")

    assert result.returncode == 7, result.stderr
    outcome = json.loads(result.stdout)
    assert (outcome["subtype"], outcome["exit_reason"], outcome["exit_code"]) == (
        "error_max_budget_usd",
        "spend_cap",
        7,
    )
    assert outcome["is_error"] is True and BEFORE_CALL.search(outcome["error"])
    assert outcome["total_cost_usd"] == 0.05


def test_a_call_that_passed_the_cap_ends_the_turn_before_its_tools_run(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    costly = tool_reply(
        "write_file", {"file_path": "x.txt", "content": "x\n"}, usage={"output_tokens": 100_000}
    )
    api_env.stream_replies.append(costly)

    result = cli.run("-p", "--max-cost", "0.50", "--permission-mode", "accept-edits", "write x.txt")

    assert result.returncode == 7, result.stderr
    assert "Stopped: spend cap of $0.50 reached ($1.00 spent)." in result.stderr
    assert not (project_dir / "x.txt").exists()

    api_env.stream_replies.append(text_reply("Not written, then."))
    again = cli.run("-c", "-p", "--max-cost", "5", "what happened?")  # a higher cap goes on

    assert again.returncode == 0, again.stderr
    answered = main_calls(api_env)[-1]
    assert answered.validation_error is None
    [result_block] = [b for b in answered.messages[2]["content"] if b["type"] == "tool_result"]
    assert "spend cap" in result_block["content"] and result_block["is_error"] is True


def test_in_the_repl_the_turn_stops_and_cost_shows_the_cap(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("apple\n")
    api_env.stream_replies.append(tool_reply("read_file", {"file_path": "a.txt"}, usage=READ_USAGE))
    with cli.terminal("--max-cost", "0.20") as term:
        term.wait_until_ready()
        term.submit("what does a.txt say?")
        term.expect(r"read_file\(a\.txt\)")
        term.expect(BEFORE_CALL.pattern)
        term.expect_prompt()
        term.submit("/cost")
        term.expect(r"Spend cap: \$0\.20 for this run \(--max-cost or maxCostUsd\), ≈ \$0\.05 spent")
        term.expect_prompt()
        term.submit("/model my-local-model")
        term.expect(r"No price is known for my-local-model: the spend cap of \$0\.20 cannot be checked")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0
    assert len(main_calls(api_env)) == 1


def test_a_model_without_a_price_is_said_at_start_to_escape_the_cap(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("ok", usage={"output_tokens": 1_000_000}))

    result = cli.run("-p", "--model", "my-local-model", "--max-cost", "1", "hi")

    assert result.returncode == 0, result.stderr  # nothing could be counted, so nothing stops it
    warning = (
        "No price is known for my-local-model: the spend cap of $1.00 cannot be checked for its calls "
        "(prices are in mini_claude/llm/pricing.py)."
    )
    assert result.stderr.count(warning) == 1
    assert result.stdout == "ok\n"


def test_the_settings_give_a_cap_and_wrong_values_are_refused(
    cli: Cli, api_env: FakeAnthropic, project_dir: Path, isolated_env: Path
) -> None:
    settings = isolated_env / ".mini-claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"maxCostUsd": 0.01}))

    capped = cli.run("-p", "hi")

    assert capped.returncode == 7 and "past the spend cap of $0.01" in capped.stderr
    assert api_env.requests == []

    settings.write_text(json.dumps({"maxCostUsd": -1}))
    api_env.stream_replies.append(text_reply("ok"))
    wrong = cli.run("-p", "hi")
    assert wrong.returncode == 0
    assert "maxCostUsd must be an amount of US dollars above 0, such as 5 or 0.50: ignored" in wrong.stderr

    for bad in ("0", "abc"):
        flag = cli.run("-p", "--max-cost", bad, "hi")
        assert flag.returncode == 2 and "--max-cost" in flag.stderr


def test_a_summary_that_could_pass_the_cap_is_not_asked_for(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    harness = Harness().start(max_cost=0.20)
    api_env.stream_replies.append(
        text_reply("A long answer.", usage={"input_tokens": 1_000, "output_tokens": 13_000})
    )
    assert harness.turn("explain everything").reason == "done"

    assert harness.session.agent.compact() is None  # /compact

    [notice] = [event.text for event in harness.of_type(Notice) if "spend cap" in event.text]
    assert notice.startswith(
        "Stopped: the next model call could cost up to $0.08, past the spend cap of $0.20"
    )
    assert len(main_calls(api_env)) == 1
