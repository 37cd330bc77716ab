"""Recognising credentials in text, so the model cannot file them away in a memory."""

from __future__ import annotations

import re

_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        ("a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
        ("an Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("an OpenAI-style API key", r"\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}"),
        ("an AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
        ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
        ("a Stripe key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{20,}"),
        ("a JSON web token", r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
        (
            "a password or token assignment",
            r"(?i)\b(?:api[_-]?key|secret|token|passw(?:or)?d|access[_-]?key)\b[\"']?\s*[:=]\s*[\"']?"
            r"(?=[A-Za-z0-9+/_.-]*\d)(?=[A-Za-z0-9+/_.-]*[A-Za-z])[A-Za-z0-9+/_.-]{16,}",
        ),
    )
)


def find_secret(text: str) -> str | None:
    """What kind of credential `text` seems to contain, or None."""
    for label, pattern in _SECRET_PATTERNS:
        if pattern.search(text):
            return label
    return None
