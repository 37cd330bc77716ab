"""/cost against a real session and the fake server: each model's tokens at that model's price,
the side queries at the side model's, and tokens only where no price is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.core.events import UsageReport
from mini_claude.llm.pricing import estimate_cost, format_dollars
from mini_claude.memory.tidy.review import TidyReview
from mini_claude.ui.commands.cost import cost_lines
from tests.agent_harness import Harness, wait_for_recalls
from tests.fake_api import FakeAnthropic, text_reply

USAGE = {"input_tokens": 40_000, "output_tokens": 2_000, "cache_read_input_tokens": 90_000}
SIDE_USAGE = {"input_tokens": 3_000, "output_tokens": 50}


@pytest.fixture
def harness(api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Harness:
    monkeypatch.setenv("MINI_CLAUDE_SIDE_MODEL", "claude-haiku-5-5")
    return Harness().start(model="claude-opus-5-5")


def used(fake: dict[str, int]) -> UsageReport:
    return UsageReport(
        fake.get("input_tokens", 0),
        fake.get("output_tokens", 0),
        fake.get("cache_read_input_tokens", 0),
        fake.get("cache_creation_input_tokens", 0),
    )


def test_a_model_switched_mid_session_is_priced_per_model(harness: Harness, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.extend([text_reply("One.", usage=USAGE), text_reply("Two.", usage=USAGE)])
    harness.turn("first")
    harness.session.agent.model = "claude-sonnet-5-5"  # what /model does
    harness.turn("second")

    [tokens, note] = cost_lines(harness.session)
    expected = estimate_cost("claude-opus-5-5", used(USAGE)) + estimate_cost("claude-sonnet-5-5", used(USAGE))
    assert tokens.endswith(f"cache read 180,000, cache write 0 · ≈ {format_dollars(expected)}")
    assert note.startswith("An estimate from list prices checked")


def test_side_queries_are_priced_with_the_side_model_and_apart(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    api_env.stream_replies.append(text_reply("One.", usage=USAGE))
    api_env.plain_replies.append(text_reply("{}", usage=SIDE_USAGE))
    harness.turn("first")
    harness.session.llm.side_query(system="s", user="u", max_tokens=10)

    side = cost_lines(harness.session)[1]
    dollars = format_dollars(estimate_cost("claude-haiku-5-5", used(SIDE_USAGE)))
    assert side == (
        f"Memory recall and # notes: 1 side query, input 3,000, output 50 · ≈ {dollars} (not counted above)"
    )


def test_unknown_models_show_tokens_only(api_env: FakeAnthropic, project_dir: Path) -> None:
    harness = Harness().start(model="my-local-model")
    api_env.stream_replies.append(text_reply("One.", usage=USAGE))
    harness.turn("first")

    assert cost_lines(harness.session) == [
        "Tokens this session: input 40,000, output 2,000, cache read 90,000, cache write 0",
        "Price unknown for my-local-model (not in mini-claude's price list): tokens only.",
    ]


def test_a_tidys_side_queries_have_a_line_of_their_own(harness: Harness, api_env: FakeAnthropic) -> None:
    store = harness.session.store
    store.save(name="deploys", description="how we deploy", memory_type="project", body="Thursdays.\n")
    api_env.plain_replies.append(text_reply('{"selected_memories": []}', usage=SIDE_USAGE))
    harness.session.recall.start("how do we deploy the payments service?")
    assert wait_for_recalls()
    api_env.plain_replies.extend(
        [
            text_reply(
                '{"read": ["project_deploys.md"]}', usage={"input_tokens": 50_000, "output_tokens": 3_000}
            ),
            text_reply('{"changes": []}', usage={"input_tokens": 40_000, "output_tokens": 8_000}),
        ]
    )
    TidyReview(store, harness.session.llm).propose()

    [_, recall, tidy, _] = cost_lines(harness.session)
    assert recall.startswith("Memory recall and # notes: 1 side query, input 3,000, output 50 · ≈")
    tidy_dollars = format_dollars(estimate_cost("claude-haiku-5-5", UsageReport(90_000, 11_000, 0, 0)))
    assert (
        tidy
        == f"Memory tidy: 2 side queries, input 90,000, output 11,000 · ≈ {tidy_dollars} (not counted above)"
    )
