"""The values of `--thinking [BUDGET]`, `--max-cost USD` and `--max-turns N`, read as argparse
reads a flag's value.

`--thinking` takes its budget only when one follows: `mini-claude --thinking fix the tests` thinks
with the default budget about "fix the tests", rather than failing on "fix" as a budget.
"""

from __future__ import annotations

import argparse
import math
import re

from mini_claude.llm.thinking import DEFAULT_BUDGET, budget_problem

THINKING_FLAG = "--thinking"
THINKING_OFF = "off"
_BUDGET_LIKE = re.compile(r"\d[\d_,]*|off", re.IGNORECASE)  # a word meant as the budget, right or wrong


def thinking_budget(text: str) -> int:
    """A budget in tokens (`8000`, `16_000`, `16,000`), or 0 for `off`."""
    if text.lower() == THINKING_OFF:
        return 0
    try:
        budget = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of tokens (or off)") from None
    if (problem := budget_problem(budget)) is not None:
        raise argparse.ArgumentTypeError(problem)
    return budget


def dollars(text: str) -> float:
    """An amount of US dollars above 0 (`5`, `0.50`, `$2`)."""
    try:
        amount = float(text.strip().removeprefix("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount of US dollars, such as 0.50") from None
    if not 0 < amount < math.inf:
        raise argparse.ArgumentTypeError(f"{text!r}: the spend cap must be more than $0")
    return amount


def thinking_budget_given(argv: list[str]) -> list[str]:
    """`argv` with a bare `--thinking` (one followed by no budget) written `--thinking=<default>`,
    so the word after it stays the prompt's (or a command's); words after `--` are left alone."""
    words = list(argv)
    for index, word in enumerate(words):
        if word == "--":
            break
        following = words[index + 1] if index + 1 < len(words) else ""
        if word == THINKING_FLAG and not _BUDGET_LIKE.fullmatch(following):
            words[index] = f"{THINKING_FLAG}={DEFAULT_BUDGET}"
    return words


def positive_int(text: str) -> int:
    """A whole number of at least 1 (`--max-turns`)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value
