"""The context window a session keeps to: the server's, when it says it is smaller than
MINI_CLAUDE_CONTEXT_WINDOW (a local model), in each server's wording; the least window that can
work; and what is said when even that is not enough. Through the real SDK and the fake server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.core.config import FIXED_PROMPT_TOKENS, MIN_CONTEXT_WINDOW
from mini_claude.core.events import ContextCompacted, ContextStatus, Notice
from mini_claude.llm.context_overflow import Overflow, context_overflow
from tests.agent_harness import Harness, talk
from tests.fake_api import FakeAnthropic, RecordedRequest, Reply, error_reply, text_reply, tool_reply
from tests.long_conversation import is_summary_request, summary_reply

ADOPTED = "The server's context window is"


def big_file(project_dir: Path, lines: int = 600) -> None:
    (project_dir / "big.txt").write_text(
        "".join(f"line {i}: some content of a big file here\n" for i in range(lines))
    )


def read_big_file(harness: Harness, fake: FakeAnthropic) -> None:
    """A turn that reads big.txt (~7,000 tokens of output) and answers."""
    fake.stream_replies.extend([tool_reply("read_file", {"file_path": "big.txt"}), text_reply("Read it.")])
    assert harness.turn("read the big file").reason == "done", [n.text for n in harness.of_type(Notice)]


def notices(harness: Harness, start: str) -> list[str]:
    return [n.text for n in harness.of_type(Notice) if n.text.startswith(start)]


@pytest.fixture
def harness(api_env: FakeAnthropic, project_dir: Path) -> Harness:
    big_file(project_dir)
    api_env.responder = summary_reply  # the model's summaries; everything else from the queue
    return Harness().start(permission_mode="bypass")


def test_a_server_with_a_smaller_window_than_set_has_its_window_kept_to(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    api_env.bytes_per_token, api_env.context_window = 4, 10_000  # a local model's 10k window
    talk(harness, api_env, "hello")

    read_big_file(harness, api_env)

    [adopted] = notices(harness, ADOPTED)
    assert adopted.startswith("The server's context window is 10,000 tokens, smaller than the 200,000 set")
    [compacted] = harness.of_type(ContextCompacted)
    refused = next(r for r in api_env.requests if r.too_long)
    assert compacted.trigger == "too_long" and compacted.before_tokens == refused.prompt_tokens  # ~11k
    assert compacted.after_tokens < 0.8 * 10_000
    [status] = harness.of_type(ContextStatus)
    assert status.window == 10_000 and status.used_tokens <= 10_000
    # From then on: the window is the server's, without being said again, and nothing is refused.
    for text in ("and now?", "once more", "read the big file again"):
        if "big" in text:
            read_big_file(harness, api_env)
        else:
            talk(harness, api_env, text)
        assert notices(harness, ADOPTED) == [] and harness.of_type(ContextStatus)[-1].window == 10_000
    assert [r for r in api_env.requests if r.too_long] == [refused]
    assert all(r.validation_error is None for r in api_env.requests)


# What servers other than the fake say, with the refused request's tokens as {tokens}.
WORDINGS = {
    "vllm": (
        "BadRequestError",
        "This model's maximum context length is 8192 tokens. However, you requested {total} tokens "
        "({tokens} in the messages, 16000 in the completion). Please reduce the length of the messages.",
    ),
    "litellm": (
        "invalid_request_error",
        "litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: "
        "OpenAIException - This model's maximum context length is 8192 tokens.",
    ),
    "llama.cpp": (
        "exceed_context_size_error",
        "request ({tokens} tokens) exceeds the available context size (8192 tokens), try increasing it",
    ),
    "openai": (
        "invalid_request_error",
        "This model's maximum context length is 8192 tokens. However, your messages resulted in {tokens} "
        "tokens.",
    ),
}


@pytest.mark.parametrize("server", list(WORDINGS))
def test_each_servers_wording_of_its_window_is_understood(
    harness: Harness, api_env: FakeAnthropic, server: str
) -> None:
    error_type, message = WORDINGS[server]

    def server_with_an_8k_window(request: RecordedRequest) -> Reply | None:
        tokens = request.size // 4
        if tokens + request.body["max_tokens"] > 8192 and not is_summary_request(request):
            words = message.format(tokens=tokens, total=tokens + request.body["max_tokens"])
            return error_reply(400, error_type=error_type, message=words)
        return summary_reply(request)

    api_env.bytes_per_token = 4  # its usage counts the request's tokens
    talk(harness, api_env, "hello")
    api_env.responder = server_with_an_8k_window
    api_env.stream_replies.extend([tool_reply("read_file", {"file_path": "big.txt"}), text_reply("Read it.")])

    assert harness.turn("read the big file").reason == "done", [n.text for n in harness.of_type(Notice)]

    [adopted] = notices(harness, ADOPTED)
    assert adopted.startswith("The server's context window is 8,192 tokens")
    retried = api_env.requests[-1]
    assert not is_summary_request(retried) and retried.validation_error is None
    # It fitted with its output: vLLM and the API count max_tokens against the window.
    assert retried.size // 4 < 0.8 * 8192 and retried.size // 4 + retried.body["max_tokens"] <= 8192
    assert harness.session.agent.messages[-1]["content"] == [{"type": "text", "text": "Read it."}]


ANTHROPIC = "invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum"
ANTHROPIC_WITH_OUTPUT = (
    "invalid_request_error: input length and `max_tokens` exceed context limit: 190000 + 16000 > 200000"
)
LLAMA_CPP_BEFORE = (
    "exceed_context_size_error: the request exceeds the available context size, try increasing it"
)
VLLM_V1 = "x: The decoder prompt (length 9000) is longer than the maximum model length of 8192."
VLLM_INPUT = (
    "x: This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens."
)
VLLM_AT_LEAST = (
    "x: This model's maximum context length is 4,096 tokens. However, your prompt contains at least 4,097 "
    "input tokens"
)


@pytest.mark.parametrize(
    ("status", "words", "expected"),
    [
        (400, ANTHROPIC, (210_000, 200_000)),
        (400, ANTHROPIC_WITH_OUTPUT, (190_000, 200_000)),
        (413, "request_too_large: Request exceeds the maximum allowed number of bytes.", (0, 0)),
        (400, LLAMA_CPP_BEFORE, (0, 0)),
        (400, VLLM_V1, (9000, 8192)),
        (400, VLLM_INPUT, (5000, 4096)),
        (400, VLLM_AT_LEAST, (4097, 4096)),
    ],
)
def test_the_numbers_in_each_wording(status: int, words: str, expected: tuple[int, int]) -> None:
    assert context_overflow(status, words) == Overflow(*expected)


def test_llama_cpp_numbers_in_its_error_object_and_what_is_not_an_overflow() -> None:
    body = {"error": {"type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096}}
    words = "exceed_context_size_error: the request exceeds the available context size, try increasing it"
    assert context_overflow(400, words, body) == Overflow(5000, 4096)
    assert context_overflow(400, "invalid_request_error: messages.0.content: field required") is None
    assert context_overflow(500, "api_error: prompt is too long: 5 tokens > 4 maximum") is None


def test_a_server_that_does_not_say_its_window_gets_a_hint_when_the_retry_fails(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    talk(harness, api_env, "hello")
    refusal = error_reply(
        400, error_type="exceed_context_size_error", message="the request exceeds the available context size"
    )
    api_env.stream_replies.extend([tool_reply("read_file", {"file_path": "big.txt"}), refusal, refusal])

    assert harness.turn("read the big file").reason == "error"

    [error] = [n.text for n in harness.of_type(Notice) if n.level == "error"]
    assert "the request exceeds the available context size" in error
    assert error.endswith(
        "(the server did not say how large its context window is: set MINI_CLAUDE_CONTEXT_WINDOW to it)"
    )
    assert notices(harness, ADOPTED) == []
    [compacted] = harness.of_type(ContextCompacted)  # announced with the size measured, ~11k
    refused = api_env.requests[2]
    assert abs(compacted.before_tokens - refused.size / 4) < 0.05 * refused.size / 4


def test_a_window_smaller_than_the_system_prompt_and_tools_is_named_as_the_cause(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    api_env.bytes_per_token, api_env.context_window = 4, 3_000  # a tiny local model
    api_env.stream_replies.append(text_reply("never sent"))

    assert harness.turn("hello").reason == "error"

    [error] = [n.text for n in harness.of_type(Notice) if n.level == "error"]
    assert "prompt is too long" in error and "latest message alone" not in error
    assert (
        "the system prompt (with CLAUDE.md and the memory index) and the tool definitions alone take ~"
        in error
    )
    assert "too many for the server's context window of 3,000 tokens" in error
    assert f"mini-claude needs at least {MIN_CONTEXT_WINDOW:,}" in error and "\n" not in error


def first_request(fake: FakeAnthropic) -> RecordedRequest:
    return next(r for r in fake.requests if r.stream)


def test_the_least_window_accepted_leaves_room_beside_the_system_prompt_and_tools(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    """FIXED_PROMPT_TOKENS is a measurement (the error for a smaller window quotes it): it must
    stay true as prompts and tools grow, and the minimum must leave the conversation half."""
    talk(harness, api_env, "hello")
    request = first_request(api_env)
    fixed = len(json.dumps(request.body["system"], separators=(",", ":"))) + len(
        json.dumps(request.body["tools"], separators=(",", ":"))
    )
    assert fixed // 4 <= FIXED_PROMPT_TOKENS <= MIN_CONTEXT_WINDOW // 2
