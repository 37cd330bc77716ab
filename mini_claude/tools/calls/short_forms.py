"""What the user reads of a failed tool call: a short form of the text the model reads.

A tool's error is written for the model ("… Do not retry this action, or work around it with
another tool", "Inspect it with run_shell if needed"); shown to the user as it is, it reads as if
addressed to them. The live tool line and the resumed screen both show this short form instead:
a fixed phrase for the notices that have one, else the message's first sentence.
"""

from __future__ import annotations

import re
from functools import cache

from mini_claude.core import prompts
from mini_claude.core.untrusted import visible_text

MAX_CHARS = 300  # an error's reason is what the user must read: shown whole up to this length
# Notices (prompts/notices.toml) whose first sentence still speaks to the model, and what the user sees.
SHORT_FORMS = {
    "permission_denied": "permission denied",
    "permission_unavailable": "needs permission, which no one can give here",
    "interrupted": "interrupted",
    "output_cut": "not run: the reply was cut off before the call was complete",
    "stream_failed": "not run: the reply was cut off by an error",
    "unknown_stop_reason": "not run: the reply ended in an unknown way",
    "invalid_tool_json": "not run: its input was not valid JSON",
    "repeated_tool_id": "not run: it repeated an earlier call's id",
    "file_binary": "a binary file: not shown",
    "shell_bad_timeout": "not run: a bad timeout",
    "tool_internal_error": "internal error (see the debug log)",
}
_SENTENCE_END = re.compile(r"[.;]\s+(?=[A-Z(\[`])")
_PLACEHOLDER = re.compile(r"\{\{\w+\}\}")


def short_form(message: str) -> str:
    """One line for the user in place of `message`, a tool error written for the model."""
    text = message.strip()
    for key, pattern in _patterns().items():
        if pattern.fullmatch(text):
            return SHORT_FORMS[key]
    lines = text.splitlines()
    first = lines[0].strip() if lines else ""
    cut = _SENTENCE_END.search(first)
    if cut is not None and first[: cut.start()].strip():
        first = first[: cut.start()]
    first = visible_text(first.rstrip(". "))
    return first if len(first) <= MAX_CHARS else first[: MAX_CHARS - 1] + "…"


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    notices = prompts.load_toml("notices.toml")
    patterns = {}
    for key in SHORT_FORMS:
        words = _PLACEHOLDER.split(notices[key].strip())
        patterns[key] = re.compile(".*?".join(map(re.escape, words)), re.DOTALL)
    return patterns
