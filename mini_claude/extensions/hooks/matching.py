"""A hook's `matcher`, as Claude Code reads it: empty or `*` matches everything; letters, digits,
`_` and `|` only (`Edit|Write`) name values exactly; anything else is a regular expression searched
for in the value (`Notebook.*`, `^mcp__`). For tool events the value is the tool, under each of its
names (`Bash` and `run_shell` alike: safety/tool_names.py)."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from mini_claude.safety.tool_names import names_of

MATCH_ALL = ("", "*")
_NAMES_ONLY = re.compile(r"[A-Za-z0-9_|]+")
MATCHER_MAX_CHARS = 500
MATCH_TIMEOUT_S = 0.05  # a matcher from a cloned repository's settings must not stall a tool call
# Events whose matcher is checked, and against what (the others run for every occurrence).
MATCHED_EVENTS = {
    "PreToolUse": "tool",
    "PostToolUse": "tool",
    "SessionStart": "source",
    "SessionEnd": "reason",
    "PreCompact": "trigger",
    "Notification": "notification type",
}


class MatcherError(ValueError):
    """A matcher that cannot be used; the message says why in a few words."""


@cache
def _compiled(matcher: str) -> Any:
    import regex  # the standard library's re has no timeout

    try:
        return regex.compile(matcher)
    except regex.error as error:
        raise MatcherError(f"not a regular expression ({error})") from None


def check_matcher(matcher: str) -> None:
    """Raise MatcherError unless `matcher` can be used."""
    if len(matcher) > MATCHER_MAX_CHARS:
        raise MatcherError(f"longer than {MATCHER_MAX_CHARS} characters")
    if matcher not in MATCH_ALL and not _NAMES_ONLY.fullmatch(matcher):
        _compiled(matcher)


def matches(matcher: str, value: str, *, tool: bool = False) -> bool:
    """Whether `matcher` selects `value` (a tool: under any of its names). A regular expression
    that takes too long matches nothing."""
    if matcher in MATCH_ALL:
        return True
    candidates = names_of(value) if tool else (value,)
    if _NAMES_ONLY.fullmatch(matcher):
        wanted = set(matcher.split("|"))
        return any(candidate in wanted for candidate in candidates)
    try:
        pattern = _compiled(matcher)
    except MatcherError:
        return False
    for candidate in candidates:
        try:
            if pattern.search(candidate, timeout=MATCH_TIMEOUT_S) is not None:
                return True
        except TimeoutError:
            continue
    return False
