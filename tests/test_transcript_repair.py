"""A transcript damaged so that its lines are still JSON but no longer a conversation the API
takes: each such record is skipped with a `file: line N:` warning, the rest loads, and what loads
is made valid as a whole (empty text, repeated tool ids, unanswered calls). Judged by the fake
API's own validator, which checks what the real API checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mini_claude.core import config
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.sessions.loading.repair import repair_conversation
from tests.fake_api_validation import validate_request

HEADER = '{"type":"session","format":1,"id":"%s","started":"2026-01-01T00:00:00Z","cwd":"/w","model":"m"}'
SID = "d" * 32


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def request_error(messages: list[dict[str, Any]]) -> str | None:
    return validate_request({"model": "m", "max_tokens": 100, "messages": messages})


def with_next_message(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as the next request holds it: the user's next message after it."""
    if messages and messages[-1]["role"] == "user":
        return [*messages[:-1], {"role": "user", "content": [*messages[-1]["content"], text("go on")]}]
    return [*messages, {"role": "user", "content": [text("go on")]}]


def write(project_dir: Path, *records: str, header: str | None = None) -> Path:
    folder = config.project_sessions_dir(project_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SID}.jsonl"
    path.write_text("\n".join([HEADER % SID if header is None else header, *records]) + "\n")
    return path


USER_HI = '{"type":"user","n":1,"content":[{"type":"text","text":"hi"}]}'
REPLY_OK = '{"type":"assistant","n":4,"content":[{"type":"text","text":"ok"}]}'
RESULT = '{"type":"tool_results","n":3,"content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}'
CALL = '{"type":"assistant","n":2,"content":[{"type":"tool_use","id":"t1","name":"read_file","input":{}}]}'

# Line 3 (the reply asking for a tool), damaged so that it is still JSON.
DAMAGED_REPLIES = {
    "tool_use_without_id": CALL.replace('"id":"t1",', ""),
    "id_not_text": CALL.replace('"id":"t1"', '"id":["t1"]'),
    "id_outside_the_pattern": CALL.replace('"id":"t1"', '"id":"t 1"'),
    "name_not_text": CALL.replace('"name":"read_file"', '"name":7'),
    "input_not_an_object": CALL.replace('"input":{}', '"input":"notadict"'),
    "text_not_text": '{"type":"assistant","n":2,"content":[{"type":"text","text":["x"]}]}',
    "text_missing": '{"type":"assistant","n":2,"content":[{"type":"text"}]}',
    "unknown_block_type": '{"type":"assistant","n":2,"content":[{"type":"weird","x":1}]}',
    "no_block_type": '{"type":"assistant","n":2,"content":[{"text":"x"}]}',
    "block_not_an_object": '{"type":"assistant","n":2,"content":["x"]}',
    "empty_content": '{"type":"assistant","n":2,"content":[]}',
    "content_not_a_list": '{"type":"assistant","n":2,"content":{"type":"text","text":"x"}}',
    "tool_result_in_a_reply": RESULT.replace('"tool_results"', '"assistant"'),
    "result_content_not_text": CALL,  # the damage is on line 4, the result
}


@pytest.mark.parametrize("damage", list(DAMAGED_REPLIES))
def test_a_record_the_api_would_refuse_is_skipped_by_line_and_the_rest_loads(
    project_dir: Path, damage: str
) -> None:
    result = RESULT
    if damage == "result_content_not_text":
        result = RESULT.replace('"content":"x"', '"content":{"a":1}')
    path = write(project_dir, USER_HI, DAMAGED_REPLIES[damage], result, REPLY_OK)

    loaded = load_transcript(path)

    line = 4 if damage == "result_content_not_text" else 3
    assert loaded.problems[0].startswith(f"{path}: line {line}: ") and loaded.problems[0].endswith(
        "; skipped"
    )
    assert "would refuse" in loaded.problems[0] or "content blocks" in loaded.problems[0]
    assert request_error(with_next_message(loaded.messages)) is None
    assert loaded.messages[0]["content"][0] == text("hi")
    assert text("ok") in [
        block for m in loaded.messages if m["role"] == "assistant" for block in m["content"]
    ]


def test_a_tool_use_in_a_user_record_is_skipped(project_dir: Path) -> None:
    call = '{"type":"tool_use","id":"t1","name":"read_file","input":{}}'
    path = write(project_dir, USER_HI.replace('{"type":"text","text":"hi"}', call), REPLY_OK)
    loaded = load_transcript(path)
    assert "line 2: a user record the API would refuse: block 1 is a tool_use block" in loaded.problems[0]


def test_fields_the_api_does_not_take_are_left_out_of_a_record_that_loads(project_dir: Path) -> None:
    marked = '{"type":"text","text":"hi","cache_control":{"type":"ephemeral"},"citations":7,"x":null}'
    records = [USER_HI.replace('{"type":"text","text":"hi"}', ",".join([marked] * 5)), REPLY_OK]
    loaded = load_transcript(write(project_dir, *records))
    assert loaded.problems == []
    assert loaded.messages[0]["content"] == [text("hi")] * 5  # five cache marks: more than the API allows
    assert request_error(with_next_message(loaded.messages)) is None


def test_empty_and_whitespace_text_is_left_out_and_a_message_left_empty_goes(project_dir: Path) -> None:
    records = [
        USER_HI,
        '{"type":"assistant","n":2,"content":[{"type":"text","text":""}]}',  # a reply of nothing
        '{"type":"user","n":3,"content":[{"type":"text","text":" \\n"},{"type":"text","text":"again"}]}',
        '{"type":"assistant","n":4,"content":[{"type":"text","text":"ok"},{"type":"text","text":"\\t"}]}',
    ]
    loaded = load_transcript(write(project_dir, *records))
    assert loaded.messages == [
        {"role": "user", "content": [text("hi"), text("again")]},
        {"role": "assistant", "content": [text("ok")]},
    ]
    assert loaded.repairs == ["3 empty text blocks left out"]
    assert request_error(with_next_message(loaded.messages)) is None


def test_a_repeated_tool_use_id_is_made_unique_with_its_result(project_dir: Path) -> None:
    records = [USER_HI, CALL, RESULT, CALL.replace('"n":2', '"n":4'), RESULT.replace("x", "second"), REPLY_OK]
    loaded = load_transcript(write(project_dir, *records))
    calls = [b for m in loaded.messages for b in m["content"] if b["type"] == "tool_use"]
    results = [b for m in loaded.messages for b in m["content"] if b["type"] == "tool_result"]
    assert [c["id"] for c in calls] == ["t1", "t1_2"]
    assert [(r["tool_use_id"], r["content"]) for r in results] == [("t1", "x"), ("t1_2", "second")]
    assert loaded.repairs == ["1 repeated tool call id made unique"]
    assert request_error(with_next_message(loaded.messages)) is None


def test_two_calls_with_one_id_in_one_reply_are_answered_in_order() -> None:
    call = {"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}
    taken = {"type": "tool_use", "id": "t1_2", "name": "read_file", "input": {}}
    messages = [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [taken]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1_2", "content": "zero"}]},
        {"role": "assistant", "content": [call, call]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
            {"type": "tool_result", "tool_use_id": "t1", "content": "two"},
        ]},
    ]  # fmt: skip
    repaired = repair_conversation(messages)
    assert [b["id"] for b in repaired.messages[3]["content"]] == ["t1", "t1_3"]  # t1_2 is taken
    assert [(b["tool_use_id"], b["content"]) for b in repaired.messages[4]["content"]] == [
        ("t1", "one"),
        ("t1_3", "two"),
    ]
    assert request_error(with_next_message(repaired.messages)) is None


def test_a_summary_keeps_standing_for_the_same_messages_when_an_empty_one_goes(project_dir: Path) -> None:
    records = [
        USER_HI,
        '{"type":"assistant","n":2,"content":[{"type":"text","text":" "}]}',
        '{"type":"user","n":3,"content":[{"type":"text","text":"second"}]}',
        '{"type":"assistant","n":4,"content":[{"type":"text","text":"answer"}]}',
        '{"type":"user","n":5,"content":[{"type":"text","text":"third"}]}',
        '{"type":"compaction","n":5,"replaced":4,"content":[{"type":"text","text":"sum"}]}',
    ]
    loaded = load_transcript(write(project_dir, *records))
    assert loaded.last_compaction is not None
    # "hi" and "second" are one message now: the summary stands for it and "answer", as before.
    assert loaded.messages[loaded.last_compaction.replaced]["content"] == [text("third")]


def test_calls_a_crash_left_open_are_answered_and_handed_back_to_be_saved(project_dir: Path) -> None:
    loaded = load_transcript(write(project_dir, USER_HI, CALL))
    assert [b["tool_use_id"] for b in loaded.appended] == ["t1"]
    assert loaded.messages[-1] == {"role": "user", "content": loaded.appended}
    assert request_error(with_next_message(loaded.messages)) is None


# --- the header ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        (
            "X" + (HEADER % SID)[1:],
            "not a readable session header: not valid JSON (Expecting value at column 1)",
        ),
        ('{"type":"session","format":1,"id":"x","started":"s"}', "the session header lacks cwd, model"),
        ('{"type":"sessio","format":1}', "not a mini-claude session header"),
        (USER_HI, "no session header (a record instead)"),
    ],
)
def test_a_damaged_header_is_named_and_the_session_still_loads(
    project_dir: Path, header: str, problem: str
) -> None:
    records = [] if header == USER_HI else [USER_HI]
    path = write(project_dir, *records, REPLY_OK.replace('"n":4', '"n":2'), header=header)

    loaded = load_transcript(path)

    assert loaded.problems[0].startswith(f"{path}: line 1: {problem}")
    assert loaded.header.id in (SID, "x") and loaded.header.cwd == ""
    assert [m["content"] for m in loaded.messages] == [[text("hi")], [text("ok")]]


def test_a_skipped_line_says_what_is_wrong_in_plain_words(project_dir: Path) -> None:
    path = write(project_dir, USER_HI)
    with path.open("a") as file:
        file.write('{"type":"assistant","n":2,"content":"unterminated')  # torn by a crash: no newline
    assert load_transcript(path).problems == []  # ignored
    loaded = load_transcript(write(project_dir, '{"type":"user","n":1,"content":"unterminated', REPLY_OK))
    assert "line 2: not valid JSON (Unterminated string starting at column 32); skipped" in loaded.problems[0]
