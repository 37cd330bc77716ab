"""The price table: dollars for the models it knows, by any name the API or a cloud gives them;
nothing (not a guess) for the rest."""

from __future__ import annotations

import pytest

from mini_claude.core.events import UsageReport
from mini_claude.llm import pricing
from mini_claude.llm.pricing import PRICES_CHECKED, estimate_cost, format_dollars, model_family

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


def test_each_kind_of_token_is_priced_as_the_api_bills_it() -> None:
    price = pricing.PRICES["claude-sonnet-5-5"]
    assert estimate_cost("claude-sonnet-5-5", UsageReport(input_tokens=MILLION)) == price.input
    assert estimate_cost("claude-sonnet-5-5", UsageReport(output_tokens=MILLION)) == price.output
    assert estimate_cost("claude-sonnet-5-5", UsageReport(cache_write_tokens=MILLION)) == price.cache_write
    assert estimate_cost("claude-sonnet-5-5", UsageReport(cache_read_tokens=MILLION)) == price.cache_read
    # Cache reads are far cheaper than fresh input, and writes dearer: a cached session must not be
    # priced as if every token were fresh input.
    assert price.cache_read < price.input < price.cache_write


@pytest.mark.parametrize(
    ("name", "same_as"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("claude-3-5-sonnet@20240620", "claude-3-5-sonnet"),
        ("anthropic/claude-opus-4-1", "claude-opus-4-1"),
        ("claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
        ("claude-sonnet-5-5[1m]", "claude-sonnet-5-5"),
        ("  Claude-Opus-5  ", "claude-opus-5"),
    ],
)
def test_a_model_is_known_by_the_names_providers_give_it(name: str, same_as: str) -> None:
    usage = UsageReport(1000, 200, 3000, 400)
    assert estimate_cost(name, usage) == estimate_cost(same_as, usage) is not None


@pytest.mark.parametrize("name", ["local", "claude-sonnet-9", "gpt-6-sol", "claude-opus", "", "sonnet"])
def test_an_unknown_model_has_no_price_rather_than_a_guess(name: str) -> None:
    assert estimate_cost(name, UsageReport(1000, 1000)) is None


def test_older_generations_keep_their_own_prices() -> None:
    usage = UsageReport(input_tokens=MILLION, output_tokens=MILLION)
    assert estimate_cost("claude-opus-4-1", usage) == 90.0  # $15 + $75
    assert estimate_cost("claude-opus-4-5", usage) == 30.0  # $5 + $25


def test_the_check_date_is_a_date() -> None:
    year, month, day = (int(part) for part in PRICES_CHECKED.split("-"))
    assert year >= 2026 and 1 <= month <= 12 and 1 <= day <= 31


@pytest.mark.parametrize(
    ("amount", "shown"),
    [(0, "$0.00"), (0.0042, "$0.0042"), (0.00001234, "$0.000012"), (0.057, "$0.06"), (1234.5, "$1,234.50")],
)
def test_small_amounts_keep_two_significant_digits(amount: float, shown: str) -> None:
    assert format_dollars(amount) == shown
