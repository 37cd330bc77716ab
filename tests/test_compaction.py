"""Keeping a long conversation inside its context window, through the real SDK against the fake
server: old tool output cleared from requests, `/compact`, automatic compaction, the server's
"prompt is too long" 400; the stored conversation always stays whole and every request is valid."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

import pytest

from mini_claude.core.config import load_settings
from mini_claude.core.env_values import ConfigError
from mini_claude.core.events import CompactionStarted, ContextCompacted, ContextStatus, Notice
from mini_claude.sessions.loading.loader import Compaction
from tests.agent_harness import Harness, ctrl_c_after, interrupt_on, talk
from tests.fake_api import FakeAnthropic, RecordedRequest, error_reply, text_reply, tool_reply
from tests.kit import result_text
from tests.long_conversation import is_summary_request, run_long_conversation

SUMMARY = "1. **Goals and requests**: fix the parser bug in src/parse.py.\n2. **Decisions**: keep the cache."
TOO_LONG = "prompt is too long: 210000 tokens > 200000 maximum"


def small_window(monkeypatch: pytest.MonkeyPatch, tokens: int) -> None:
    monkeypatch.setenv("MINI_CLAUDE_CONTEXT_WINDOW", str(tokens))


def all_text(request: RecordedRequest) -> str:
    parts = []
    for message in request.messages:
        for block in message["content"]:
            parts.append(block.get("text") or result_text(block) if block.get("type") != "tool_use" else "")
    return "\n".join(parts)


def user_texts(request: RecordedRequest) -> list[str]:
    return [
        block["text"]
        for message in request.messages
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    ]


def assert_all_valid(fake: FakeAnthropic) -> None:
    assert [r.validation_error for r in fake.requests] == [None] * len(fake.requests)


# -- clearing old tool output ------------------------------------------------------------------------


def test_old_tool_output_is_cleared_in_steps_in_requests_but_kept_whole_in_the_conversation(
    api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_window(monkeypatch, 20_000)
    api_env.bytes_per_token = 4  # usage grows with the request, as a real server counts it
    for k in range(10):
        (project_dir / f"file_{k}.txt").write_text(
            "".join(f"line {n} of file {k}: " + "x" * 60 + "\n" for n in range(60))
        )
    notices: list[str] = []
    harness = Harness(on_event=lambda e: notices.append(e.text) if isinstance(e, Notice) else None).start()
    for k in range(10):
        api_env.stream_replies.extend(
            [tool_reply("read_file", {"file_path": f"file_{k}.txt"}), text_reply(f"file {k} read")]
        )
        assert harness.turn(f"read file_{k}.txt").reason == "done"

    assert_all_valid(api_env)
    cleared = [all_text(r).count("[earlier output of read_file") for r in api_env.requests]
    assert cleared[-1] >= 4, cleared
    # In steps: the cleared part stays the same over several calls (the cached prefix with it), and
    # each move clears at least two outputs (10% of the window), never one output per call.
    moves = [b - a for a, b in itertools.pairwise(cleared) if b != a]
    assert moves and all(move >= 2 for move in moves), cleared
    assert len(moves) < len([c for c in cleared if c]) / 2, cleared
    last = all_text(api_env.requests[-1])
    assert "[earlier output of read_file file_0.txt, 60 lines, cleared" in last
    for k in (7, 8, 9):  # the latest three results stay whole
        assert f"line 59 of file {k}" in last
    assert "line 59 of file 0" not in last
    # The stored conversation keeps every output whole.
    stored = "\n".join(
        result_text(b) for m in harness.session.agent.messages for b in m["content"] if "content" in b
    )
    assert all(f"line 59 of file {k}" in stored for k in range(10))
    assert "earlier output" not in stored
    assert len([n for n in notices if n.startswith("Cleared old tool output")]) == len(moves)
    assert not [c for c in harness.of_type(ContextCompacted)]  # clearing was enough


# -- /compact ------------------------------------------------------------------------------------------


def test_compact_with_focus_summarises_earlier_turns_and_keeps_the_latest_verbatim(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    talk(harness, api_env, "first: the parser drops tokens", "second: try the cache", "third", "fourth")
    agent = harness.session.agent
    stored_before = copy.deepcopy(agent.messages)
    api_env.stream_replies.append(text_reply(SUMMARY))

    compacted = agent.compact("the parser bug")

    assert compacted is not None and agent.context.view.compaction is not None
    summary_request = api_env.requests[-1]
    main_request = api_env.requests[-2]
    assert summary_request.validation_error is None
    assert summary_request.system == main_request.system and summary_request.tools == main_request.tools
    said = user_texts(summary_request)
    assert said[:2] == ["first: the parser drops tokens", "second: try the cache"]
    assert "third" not in said and "fourth" not in said  # kept verbatim: not summarised
    instruction = said[-1]
    assert "write a summary of the conversation so far" in instruction
    assert "<compact-focus>\nthe parser bug\n</compact-focus>" in instruction
    assert compacted.summary == ({"type": "text", "text": SUMMARY},) and compacted.replaced == 4
    assert compacted.trigger == "manual" and compacted.focus == "the parser bug"
    assert harness.of_type(CompactionStarted) and harness.of_type(ContextCompacted) == [compacted]
    assert agent.messages == stored_before  # the stored conversation stays whole

    talk(harness, api_env, "fifth")
    after = api_env.requests[-1]
    assert after.validation_error is None
    first = after.messages[0]["content"]
    assert "<conversation-summary>" in first[0]["text"] and SUMMARY in first[0]["text"]
    assert user_texts(after)[1:] == ["third", "fourth", "fifth"]
    assert [m["role"] for m in after.messages] == ["user", "assistant", "user", "assistant", "user"]
    assert "first: the parser drops tokens" not in all_text(after)


def test_compact_without_focus_and_with_a_single_turn_summarises_it_all(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    talk(harness, api_env, "only turn")
    api_env.stream_replies.append(text_reply(SUMMARY))

    compacted = harness.session.agent.compact()

    assert compacted is not None and compacted.replaced == 2 and compacted.focus is None
    assert "compact-focus" not in user_texts(api_env.requests[-1])[-1]
    talk(harness, api_env, "next")
    after = api_env.requests[-1]
    assert after.validation_error is None and len(after.messages) == 1
    [summary, typed] = after.messages[0]["content"]
    assert SUMMARY in summary["text"] and typed["text"] == "next"

    harness.events.clear()
    sent = len(api_env.requests)
    harness.session.agent.context.view.compaction = Compaction([{"type": "text", "text": SUMMARY}], 4)
    assert harness.session.agent.compact() is None  # nothing new since: no call, a notice
    assert len(api_env.requests) == sent
    assert [n.text for n in harness.of_type(Notice)] == [
        "Nothing to compact: the conversation is already summarised."
    ]


def test_nothing_to_compact_in_an_empty_conversation(harness: Harness, api_env: FakeAnthropic) -> None:
    harness.events.clear()
    assert harness.session.agent.compact() is None
    assert api_env.requests == []
    assert [n.text for n in harness.of_type(Notice)] == ["Nothing to compact: the conversation is empty."]


def test_a_second_compaction_folds_the_first_summary_in(harness: Harness, api_env: FakeAnthropic) -> None:
    talk(harness, api_env, "one", "two", "three")
    api_env.stream_replies.append(text_reply(SUMMARY))
    harness.session.agent.compact()
    talk(harness, api_env, "four", "five")
    api_env.stream_replies.append(text_reply("second summary"))

    second = harness.session.agent.compact()

    request = api_env.requests[-1]
    assert request.validation_error is None
    assert SUMMARY in request.messages[0]["content"][0]["text"]  # the earlier summary is summarised too
    assert second is not None and second.replaced == 6  # one … three and their answers
    talk(harness, api_env, "six")
    assert "second summary" in all_text(api_env.requests[-1]) and SUMMARY not in all_text(
        api_env.requests[-1]
    )


# -- automatic compaction ------------------------------------------------------------------------------


def test_compacts_automatically_once_the_last_call_passes_80_percent(
    api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_window(monkeypatch, 10_000)
    api_env.bytes_per_token = 4  # the fake counts the tokens of what it is sent
    harness = Harness().start()
    api_env.stream_replies.extend([text_reply("ok"), text_reply("ok")])
    harness.turn("one " + "word " * 1_400)  # ~4,300 + 1,750 tokens: 61%
    harness.turn("two " + "word " * 800)  # ~71%: no compaction yet
    assert len(api_env.requests) == 2 and api_env.requests[-1].prompt_tokens < 8_000
    api_env.stream_replies.extend([text_reply(SUMMARY), text_reply("third answer")])

    assert harness.turn("three " + "word " * 1_200).reason == "done"  # would be ~87%

    [event] = harness.of_type(ContextCompacted)
    assert event.trigger == "auto" and event.before_tokens > 8_000 and event.after_tokens < 6_000
    summary_request, main = api_env.requests[2:]
    assert is_summary_request(summary_request) and summary_request.validation_error is None
    assert main.validation_error is None and SUMMARY in main.messages[0]["content"][0]["text"]
    assert abs(main.prompt_tokens - event.after_tokens) < 100  # the estimate is close to the count
    assert harness.of_type(ContextStatus)[-1].window == 10_000


def test_compaction_mid_turn_right_after_tool_calls_keeps_every_pair(
    api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_window(monkeypatch, 10_000)
    (project_dir / "a.txt").write_text("alpha\n")
    harness = Harness().start()
    talk(harness, api_env, "warm up")
    api_env.stream_replies.extend(
        [
            tool_reply("read_file", {"file_path": "a.txt"}, usage={"input_tokens": 9_000}),
            text_reply(SUMMARY),
            text_reply("done reading"),
        ]
    )

    assert harness.turn("read a.txt").reason == "done"

    summary_request, after = api_env.requests[-2:]
    assert is_summary_request(summary_request) and summary_request.validation_error is None
    assert user_texts(summary_request)[0] == "warm up" and "read a.txt" not in user_texts(summary_request)
    assert after.validation_error is None
    # The current turn stays verbatim, its call and result together, after the summary.
    [summary, typed] = after.messages[0]["content"]
    assert SUMMARY in summary["text"] and typed["text"] == "read a.txt"
    assert after.messages[1]["content"][0]["type"] == "tool_use"
    assert "alpha" in result_text(after.messages[2]["content"][0])


def test_compaction_right_after_a_turn_that_stopped_at_the_turn_cap(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "a.txt").write_text("alpha\n")
    harness = Harness().start(max_turns=1)
    api_env.stream_replies.append(tool_reply("read_file", {"file_path": "a.txt"}))
    assert harness.turn("read it").reason == "turn_cap"  # the conversation ends with tool results
    api_env.stream_replies.extend([text_reply(SUMMARY), text_reply("continuing")])

    assert harness.session.agent.compact() is not None
    assert harness.turn("go on").reason == "done"

    summary_request, after = api_env.requests[-2:]
    assert summary_request.validation_error is None and after.validation_error is None
    assert [b["type"] for b in summary_request.messages[-1]["content"]] == ["tool_result", "text"]


# -- the server's "prompt is too long" -------------------------------------------------------------


def test_prompt_too_long_compacts_and_retries_once(harness: Harness, api_env: FakeAnthropic) -> None:
    talk(harness, api_env, "one", "two")
    api_env.stream_replies.extend(
        [
            error_reply(400, error_type="invalid_request_error", message=TOO_LONG),
            text_reply(SUMMARY),
            text_reply("fits now"),
        ]
    )

    ended = harness.turn("three")

    assert ended.reason == "done" and ended.final_text == "fits now"
    refused, summary_request, retried = api_env.requests[-3:]
    assert user_texts(refused)[-1] == "three" and not is_summary_request(refused)
    assert is_summary_request(summary_request) and summary_request.validation_error is None
    assert retried.validation_error is None and SUMMARY in all_text(retried)
    assert user_texts(retried)[-1] == "three"
    [event] = harness.of_type(ContextCompacted)
    assert event.trigger == "too_long" and event.before_tokens == 210_000


def test_a_second_too_long_answer_ends_the_turn_with_an_error_not_a_loop(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    talk(harness, api_env, "one", "two")
    too_long = error_reply(400, error_type="invalid_request_error", message=TOO_LONG)
    api_env.stream_replies.extend([too_long, text_reply(SUMMARY), too_long, text_reply("never asked for")])

    ended = harness.turn("three")

    assert ended.reason == "error"
    assert len(api_env.requests) == 2 + 3
    [error] = [n for n in harness.of_type(Notice) if n.level == "error"]
    assert "prompt is too long" in error.text and "\n" not in error.text
    api_env.stream_replies.clear()
    # The server said the request is still too long: the next turn compacts again first.
    api_env.stream_replies.append(text_reply(SUMMARY))
    talk(harness, api_env, "four")
    assert is_summary_request(api_env.requests[-2]) and api_env.requests[-1].validation_error is None


def test_prompt_too_long_when_the_summary_also_fails(harness: Harness, api_env: FakeAnthropic) -> None:
    talk(harness, api_env, "one")
    api_env.stream_replies.extend(
        [
            error_reply(400, error_type="invalid_request_error", message=TOO_LONG),
            *[error_reply(500, retry_after=0.01)] * 3,
        ]
    )

    ended = harness.turn("two")

    assert ended.reason == "error"
    [error] = [n for n in harness.of_type(Notice) if n.level == "error"]
    assert "prompt is too long" in error.text and "Compaction failed" in error.text
    assert harness.session.agent.context.view.compaction is None


# -- failures and Ctrl+C ---------------------------------------------------------------------------


def test_a_failed_summary_call_leaves_the_conversation_as_it_was(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    talk(harness, api_env, "one", "two", "three")
    before = copy.deepcopy(harness.session.agent.messages)
    api_env.stream_replies.extend([error_reply(500, retry_after=0.01)] * 3)  # retried twice
    harness.events.clear()

    assert harness.session.agent.compact() is None

    [notice] = harness.of_type(Notice)
    assert notice.level == "error" and notice.text.startswith("Compaction failed (API error 500")
    assert notice.text.endswith("the conversation is unchanged.")
    assert harness.session.agent.context.view.compaction is None and harness.session.agent.messages == before
    talk(harness, api_env, "four")
    assert user_texts(api_env.requests[-1]) == ["one", "two", "three", "four"]


def test_a_summary_with_no_text_is_a_failure(harness: Harness, api_env: FakeAnthropic) -> None:
    talk(harness, api_env, "one", "two")
    api_env.stream_replies.append(tool_reply("read_file", {"file_path": "x"}))
    harness.events.clear()

    assert harness.session.agent.compact() is None

    assert (
        "no summary" in harness.of_type(Notice)[0].text
        and harness.session.agent.context.view.compaction is None
    )


def test_ctrl_c_during_compaction_cancels_it_and_loses_nothing(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    talk(harness, api_env, "one", "two", "three")
    before = copy.deepcopy(harness.session.agent.messages)
    api_env.stream_replies.append(text_reply(SUMMARY, held=True))  # no summary before the Ctrl+C
    harness.events.clear()

    with ctrl_c_after(0.3):
        assert harness.session.agent.compact() is None

    assert [n.text for n in harness.of_type(Notice)] == [
        "Compaction cancelled; the conversation is unchanged."
    ]
    assert harness.session.agent.context.view.compaction is None and harness.session.agent.messages == before
    api_env.stream_replies.clear()
    talk(harness, api_env, "four")
    assert user_texts(api_env.requests[-1]) == ["one", "two", "three", "four"]
    assert api_env.requests[-1].validation_error is None


def test_ctrl_c_during_automatic_compaction_ends_the_turn_and_loses_nothing(
    api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_window(monkeypatch, 10_000)
    harness = Harness().start()
    api_env.stream_replies.append(text_reply("big", usage={"input_tokens": 9_000}))
    harness.turn("one")
    api_env.stream_replies.append(text_reply(SUMMARY))
    harness.on_event = interrupt_on(CompactionStarted)

    assert harness.turn("two").reason == "interrupted"

    harness.on_event = None
    assert harness.session.agent.context.view.compaction is None
    api_env.stream_replies.extend([text_reply(SUMMARY), text_reply("three answered")])
    assert harness.turn("three").reason == "done"
    assert api_env.requests[-1].validation_error is None
    said = user_texts(api_env.requests[-1])
    assert said[1] == "two" and said[-1] == "three"  # the latest typing, verbatim


# -- a compaction set from outside (a resumed transcript) ---------------------------------------------


@pytest.mark.parametrize("replaced", [-3, 0, 1, 2, 3, 4, 99])
def test_any_compaction_point_gives_a_valid_request(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path, replaced: int
) -> None:
    (project_dir / "a.txt").write_text("alpha\n")
    api_env.stream_replies.extend([tool_reply("read_file", {"file_path": "a.txt"}), text_reply("read")])
    harness.turn("read a.txt")  # user, assistant (call), user (result), assistant
    harness.session.agent.context.view.compaction = Compaction([{"type": "text", "text": SUMMARY}], replaced)

    talk(harness, api_env, "next")

    assert api_env.requests[-1].validation_error is None
    assert SUMMARY in all_text(api_env.requests[-1])


# -- the long run, short ------------------------------------------------------------------------------


def test_a_long_conversation_stays_inside_a_small_window_with_valid_requests(
    api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_window(monkeypatch, 20_000)
    monkeypatch.setenv("MINI_CLAUDE_MAX_TOKENS", "2000")

    run = run_long_conversation(api_env, project_dir, turns=45, window=20_000)

    assert run.endings == ["done"] * 45
    assert run.refused == [] and run.warnings == []
    assert run.peak_tokens <= 20_000
    assert len(run.compactions) >= 3
    assert all(c.after_tokens < c.before_tokens for c in run.compactions)


# -- the setting ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [("abc", "is not a number"), ("2e5", "is not a number"), ("-5", "must not be negative"),
     ("0", "must be at least 8,600"), ("3000", "is too small: it must be at least 8,600 tokens (the system "
     "prompt and tool definitions alone take about 4,300)"), ("nan", "is not a number")],
)  # fmt: skip
def test_a_bad_context_window_setting_is_one_clear_line(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, value: str, problem: str
) -> None:
    monkeypatch.setenv("MINI_CLAUDE_CONTEXT_WINDOW", value)
    with pytest.raises(ConfigError, match="MINI_CLAUDE_CONTEXT_WINDOW") as raised:
        load_settings()
    assert problem in str(raised.value) and "\n" not in str(raised.value)


def test_the_context_window_setting(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().context_window == 200_000
    monkeypatch.setenv("MINI_CLAUDE_CONTEXT_WINDOW", " 32000 ")
    assert load_settings().context_window == 32_000
    assert Harness().start().session.agent.context.view.window == 32_000


def test_a_single_message_larger_than_the_window_is_one_request_and_one_error(
    api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_window(monkeypatch, 10_000)
    api_env.bytes_per_token, api_env.context_window = 4, 10_000  # refuses what does not fit
    harness = Harness().start()

    ended = harness.turn("please read this paste: " + "word " * 20_000)  # ~25,000 tokens

    assert ended.reason == "error"
    assert len(api_env.requests) == 1 and api_env.requests[0].too_long  # no summary request is sent
    [error] = [n.text for n in harness.of_type(Notice)]
    assert "prompt is too long" in error and "/clear starts a new conversation" in error
    assert len(harness.session.agent.messages) == 1  # the message stays, as typed
