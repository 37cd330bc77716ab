"""What the user typed, told apart from what mini-claude puts into their message for the model: the
output of a `!command` they ran (prompts/prompt_input.toml's wording), the files they attached
with `@path`, recalled memories, notices, a compaction's summary. The session list, its filter,
the resumed screen, /rewind and tidy's reading of past sessions take the user's own words from
here; a command they ran as `!command`, a skill or custom command as the `/name args` they typed.
"""

from __future__ import annotations

import html
import re
from functools import cache
from typing import Any

from mini_claude.core import prompts

REMINDER_START = "<system-reminder>"  # recalled memories (memory/recall/memory_recall.py)
NOTICES = ("user_interrupted", "transcript_gap")  # texts mini-claude adds (prompts/notices.toml)
SUMMARY_TEMPLATE = "compact_summary.md"  # what requests hold for compacted messages (agent/request_view.py)
SHELL_KEY = "shell_output"  # prompts/prompt_input.toml: the output of `!command`
CONTEXT_KEYS = (SHELL_KEY, "attached_file", "attached_folder")
COMMAND_START = "$ "  # the wrapped output's first line: `$ <command>` (ui/repl/shell_line.py)
PART_SEPARATOR = " · "  # between a command and the text in a one-line preview
RAN_KEY = "user_ran"  # prompts/extensions.toml: what `/name args` sends (app/invocation.py)


def typed_text(block: Any) -> str | None:
    """What the user typed, if this block of a user message holds it: their text as it is, or
    `!command` (its first line) for a command they ran; None for anything mini-claude added."""
    if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
        return None
    text: str = block["text"]
    if text.startswith((REMINDER_START, _summary_start())) or text in _notices():
        return None
    if (ran := _ran_pattern().match(text)) is not None:  # `/name args`, the skill or command sent
        return html.unescape(f"/{ran['name']}{ran['arguments']}")
    kind, rest = added_context(text)
    if kind is None:
        return text
    return shell_command(rest) if kind == SHELL_KEY else None


def typed_preview(blocks: Any) -> str:
    """A user message's own words on one line: `!command · their text` (parts in order)."""
    parts = [typed_text(block) for block in blocks] if isinstance(blocks, list) else []
    return PART_SEPARATOR.join(part for part in parts if part)


def added_context(text: str) -> tuple[str | None, str]:
    """(which prompt_input.toml text `text` is, or None; what follows its fixed words and the
    tag opening the content). Works on the start of a text as well: a preview of a long one."""
    for key, pattern in _context_patterns().items():
        match = pattern.match(text)
        if match is not None:
            return key, text[match.end() :]
    return None, text


def shell_command(rest: str) -> str | None:
    """`!<command>` from what follows the shell-output text's opening tag: its first line (a
    command typed over several lines cannot be told from its output there)."""
    line = rest.lstrip("\n").partition("\n")[0]
    return "!" + line.removeprefix(COMMAND_START) if line.startswith(COMMAND_START) else None


@cache
def _context_patterns() -> dict[str, re.Pattern[str]]:
    """Each text's fixed words up to the content it wraps (its last placeholder), placeholders
    before that matching one line of anything, then the opening tag of the wrapped content."""
    templates = prompts.load_toml("prompt_input.toml")
    patterns = {}
    for key in CONTEXT_KEYS:
        template = templates[key].strip()
        words = re.split(r"\{\{\w+\}\}", template[: template.rindex("{{")])
        patterns[key] = re.compile("[^\n]*?".join(map(re.escape, words)) + r"\s*<[\w-]+[ >]")
    return patterns


@cache
def _ran_pattern() -> re.Pattern[str]:
    """The first line of what `/name args` sends, its name and arguments (as written in it) apart."""
    line = prompts.load_toml("extensions.toml")[RAN_KEY].strip().partition("\n")[0]
    fields = {"name": r"(?P<name>[^\s,]+)", "arguments": r"(?P<arguments>(?: [^\n]*?)?)"}
    parts = re.split(r"\{\{(\w+)\}\}", line)  # words, then a placeholder's name, and so on
    pattern = "".join(re.escape(p) if i % 2 == 0 else fields.get(p, "[^\n]*?") for i, p in enumerate(parts))
    return re.compile(pattern)


@cache
def _summary_start() -> str:
    """The summary block's fixed words, before the summary itself."""
    template = prompts.load(SUMMARY_TEMPLATE)
    return template[: template.index("{{")].strip()


@cache
def _notices() -> frozenset[str]:
    return frozenset(prompts.notice(name) for name in NOTICES)
