"""Estimated cost: the model ids people use map to their family's list price; unknown models get
no estimate rather than a guess."""

from __future__ import annotations

import pytest

from mini_claude.events import UsageReport
from mini_claude.pricing import estimate_cost, model_family

MILLION = 1_000_000


@pytest.mark.parametrize(
    "model",
    [
        "claude-sonnet-5-5",
        "claude-sonnet-5-5-20261001",
        "Claude-Sonnet-5-5[1m]",
        "us.anthropic.claude-sonnet-5-5-v1:0",
        "claude-sonnet-5-5@20261001",
    ],
)
def test_the_forms_of_a_model_id_share_its_price(model: str) -> None:
    assert model_family(model) == "claude-sonnet-5-5"
    assert estimate_cost(model, UsageReport(MILLION, MILLION, MILLION, MILLION)) == pytest.approx(
        2.00 + 10.00 + 0.10 + 2.50
    )


def test_a_family_is_not_mistaken_for_a_longer_one() -> None:
    assert estimate_cost("claude-opus-5", UsageReport(MILLION)) == pytest.approx(5.00)
    assert estimate_cost("claude-opus-5-5", UsageReport(MILLION)) == pytest.approx(4.00)


def test_unknown_models_have_no_estimate() -> None:
    for model in ("local-llama", "claude-sonnet-9", "gpt-6", ""):
        assert estimate_cost(model, UsageReport(1000, 1000)) is None


def test_a_tiered_price_follows_the_prompt_size() -> None:
    short = estimate_cost("claude-haiku-5-5", UsageReport(100_000, 1000))
    long = estimate_cost("claude-haiku-5-5", UsageReport(60_000, 1000, cache_read_tokens=50_000))
    assert short == pytest.approx((100_000 * 0.10 + 1000 * 0.50) / MILLION)
    assert long == pytest.approx((60_000 * 0.50 + 1000 * 2.50 + 50_000 * 0.05) / MILLION)
