"""`@case(category, expected)`: what each adversarial test tries, for the `make faults` table."""

from __future__ import annotations

import pytest

# The table lists categories in this order; a case with another category is a collection error.
CATEGORIES = ("paths", "permissions", "memory", "crashes", "server", "secrets", "terminal", "context")


def case(category: str, expected: str) -> pytest.MarkDecorator:
    """Name what a test tries: its category and, in a few words, the outcome it insists on."""
    if category not in CATEGORIES:
        raise ValueError(f"case category {category!r} is not one of {', '.join(CATEGORIES)}")
    return pytest.mark.case(category=category, expected=expected)
