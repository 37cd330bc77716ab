"""What model calls cost, estimated from Anthropic's list prices for the model families we know.

One table, kept here only. PRICES_CHECKED is when it was last compared with the pricing page
(https://platform.claude.com/docs/en/about-claude/pricing); a model not in it has no estimate
(None: shown as tokens only), never a guessed one. Batch, regional and fast-mode prices are not
used: mini-claude makes ordinary calls. Cache writes are priced as 5-minute writes, the kind we make.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from mini_claude.core.events import UsageReport

PRICES_CHECKED = "2026-12-01"
TOKENS_PER_PRICE = 1_000_000  # prices are in US dollars per million tokens


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_write: float
    cache_read: float


@dataclass(frozen=True)
class TieredPrice:
    """A price that depends on the prompt's size (input, cache reads and writes) of a request."""

    up_to: int
    short: Price
    long: Price


_OPUS_4_5 = Price(5.00, 25.00, 6.25, 0.50)
_OPUS_4 = Price(15.00, 75.00, 18.75, 1.50)
_SONNET_4 = Price(3.00, 15.00, 3.75, 0.30)
_FABLE_5 = Price(10.00, 50.00, 12.50, 1.00)
_FABLE_5_1 = Price(10.00, 50.00, 12.50, 0.25)
PRICES: dict[str, Price | TieredPrice] = {
    "claude-fable-5-1": _FABLE_5_1,
    "claude-mythos-5-1": _FABLE_5_1,
    "claude-fable-5": _FABLE_5,
    "claude-mythos-5": _FABLE_5,
    "claude-opus-5-5": Price(4.00, 20.00, 5.00, 0.20),
    "claude-opus-5": _OPUS_4_5,
    "claude-opus-4-8": _OPUS_4_5,
    "claude-opus-4-7": _OPUS_4_5,
    "claude-opus-4-6": _OPUS_4_5,
    "claude-opus-4-5": _OPUS_4_5,
    "claude-opus-4-1": _OPUS_4,
    "claude-opus-4-0": _OPUS_4,
    "claude-opus-4": _OPUS_4,
    "claude-3-opus": _OPUS_4,
    "claude-sonnet-5-5": Price(2.00, 10.00, 2.50, 0.10),  # cache reads cut from 0.20 on 2026-10-07
    "claude-sonnet-5": Price(2.00, 10.00, 2.50, 0.20),
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4,  # Sonnet 4 and 4.5 cost more above 200K input tokens
    "claude-sonnet-4-0": _SONNET_4,
    "claude-sonnet-4": _SONNET_4,
    "claude-3-7-sonnet": _SONNET_4,
    "claude-3-5-sonnet": _SONNET_4,
    "claude-haiku-5-5": TieredPrice(
        100_000, short=Price(0.10, 0.50, 0.125, 0.01), long=Price(0.50, 2.50, 0.625, 0.05)
    ),
    "claude-haiku-4-5": Price(1.00, 5.00, 1.25, 0.10),
    "claude-3-5-haiku": Price(0.80, 4.00, 1.00, 0.08),
    "claude-3-haiku": Price(0.25, 1.25, 0.30, 0.03),
}
# What wraps a family's name in a model id: a provider prefix (`anthropic/`, Bedrock's `us.anthropic.`), a
# snapshot date (`-20260724`, Vertex's `@20260724`), a version (`-v1:0`), a context tag (`[1m]`).
_PREFIX = re.compile(r"^(?:[a-z]{2,4}\.)?anthropic[./]")
_SUFFIX = re.compile(r"(?:\[[^\]]*\]|-v\d+(?::\d+)?|[-@]\d{8}|-latest)+$")


def model_family(model: str) -> str:
    """`claude-sonnet-5-5` for `claude-sonnet-5-5-20260901`, `us.anthropic.claude-sonnet-5-5-v1:0`…"""
    return _SUFFIX.sub("", _PREFIX.sub("", model.strip().lower()))


def estimate_cost(model: str, usage: UsageReport) -> float | None:
    """US dollars for `usage` at `model`'s list price, or None when its price is not known. A
    tiered price is judged on `usage` as one request's: for a sum of requests it is an estimate."""
    price = PRICES.get(model_family(model))
    if price is None:
        return None
    if isinstance(price, TieredPrice):
        prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        price = price.short if prompt <= price.up_to else price.long
    dollars = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_write_tokens * price.cache_write
        + usage.cache_read_tokens * price.cache_read
    )
    return dollars / TOKENS_PER_PRICE


def format_dollars(amount: float) -> str:
    """`$1.27`, `$0.06`, `$0.0042`: cents from a cent up, else two significant digits (a short
    session costs fractions of a cent, which `$0.00` would hide)."""
    if amount >= 0.01 or amount <= 0:
        return f"${amount:,.2f}"
    decimals = 1 - math.floor(math.log10(amount))
    return f"${amount:.{decimals}f}"
