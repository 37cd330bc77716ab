"""Choosing the memories relevant to a message (a side query) and wrapping them as reminders."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence

from mini_claude.core import prompts
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.untrusted import REMINDER_TAG, attribute, contained, neutralize, wrap
from mini_claude.llm.client import ModelClient
from mini_claude.memory.store.index import INDEX_TAG, clean_inline
from mini_claude.memory.store.memory_file import MemoryFile

MANIFEST_MAX_MEMORIES = 100  # the most relevant to the message (see ranking.py)
MANIFEST_DESCRIPTION_MAX_BYTES = 120
# With its line break; the description is cut to fit (only a hand-made long file name exceeds it).
MANIFEST_LINE_MAX_BYTES = 200
MAX_SELECTED = 5
SELECTION_MAX_TOKENS = 300
MEMORY_CONTENT_MAX_BYTES = 4096
BOOKKEEPING_KEYS = {"session", "fingerprint"}


def days_old(mtime: float, now: float) -> int:
    """Calendar days between the file's last change and now (local time)."""
    saved = dt.datetime.fromtimestamp(mtime).date()
    today = dt.datetime.fromtimestamp(now).date()
    return max(0, (today - saved).days)


def age_text(mtime: float, now: float) -> str:
    days = days_old(mtime, now)
    return {0: "today", 1: "yesterday"}.get(days, f"{days} days ago")


def manifest_line(memory: MemoryFile, now: float) -> str:
    prefix = f"[{memory.type}] {memory.key} ({age_text(memory.mtime, now)}): "
    # A long file name (the slug may take 120 bytes) leaves less room for the description.
    room = min(
        MANIFEST_DESCRIPTION_MAX_BYTES,
        MANIFEST_LINE_MAX_BYTES - 1 - len(prefix.encode("utf-8", "surrogateescape")),
    )
    description = clean_inline(memory.description, MANIFEST_DESCRIPTION_MAX_BYTES)
    encoded = description.encode("utf-8")
    if len(encoded) > room:
        description = encoded[: max(0, room - 3)].decode("utf-8", errors="ignore") + "…"
    return prefix + description


def build_manifest(memories: Sequence[MemoryFile], now: float) -> str:
    return "\n".join(manifest_line(m, now) for m in memories[:MANIFEST_MAX_MEMORIES])


def selection_request(query: str, memories: Sequence[MemoryFile], now: float) -> tuple[str, str]:
    """The side query's (system, user) texts."""
    system = prompts.render("memory_select.md", max_selected=MAX_SELECTED)
    user = prompts.render(
        "memory_select_user.md",
        query=contained(query, "user-message"),
        manifest=contained(build_manifest(memories, now), "memories"),
    )
    return system, user


def parse_selection(text: str, allowed: Sequence[str]) -> list[str]:
    """File names from `{"selected_memories": [...]}` anywhere in `text` (prose or code fence
    around it is fine); only names from `allowed`, no repeats, at most MAX_SELECTED."""
    allowed_set = set(allowed)
    decoder = json.JSONDecoder()
    position = text.find("{")
    while position != -1:
        try:
            value, _ = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("selected_memories"), list):
            chosen: list[str] = []
            for item in value["selected_memories"]:
                if isinstance(item, str) and item in allowed_set and item not in chosen:
                    chosen.append(item)
            return chosen[:MAX_SELECTED]
        position = text.find("{", position + 1)
    return []


def select_relevant(llm: ModelClient, query: str, memories: Sequence[MemoryFile], now: float) -> list[str]:
    """Ask the side model which memories matter for `query` (their keys: the file name, or
    `user/…`, `team/…`); raises on a failed side query."""
    system, user = selection_request(query, memories, now)
    answer = llm.side_query(system=system, user=user, max_tokens=SELECTION_MAX_TOKENS)
    return parse_selection(answer, [m.key for m in memories[:MANIFEST_MAX_MEMORIES]])


def freshness_note(mtime: float, now: float) -> str:
    days = days_old(mtime, now)
    if days == 0:
        return prompts.notice("memory_saved_today")
    if days == 1:
        return prompts.notice("memory_saved_yesterday")
    return prompts.notice("memory_stale", days=days)


def reminder_text(
    memory: MemoryFile, body: str, was_cut: bool, now: float, checks: Sequence[str] = ()
) -> str:
    """One `<system-reminder>` block; the memory's text cannot open or close the tag. `checks`:
    one line each on what may no longer hold (a file it is about changed since, a condition)."""
    if was_cut:
        body = body.rstrip() + "\n" + prompts.notice("memory_content_cut", max_bytes=MEMORY_CONTENT_MAX_BYTES)
    text = prompts.render(
        "memory_reminder.md",
        freshness=freshness_note(memory.mtime, now),
        checks="".join("\n" + line for line in checks),
        scope="" if memory.scope == "project" else " " + prompts.notice(f"memory_scope_{memory.scope}"),
        path=attribute(str(memory.path)),
        content=_without_bookkeeping(body),
    ).strip()
    return wrap(REMINDER_TAG, neutralize(text, INDEX_TAG))


def _without_bookkeeping(text: str) -> str:
    """The memory's text without the provenance lines that tell the model nothing (its session,
    its fingerprint): only what a person or the model wrote, and who and when."""
    parsed = frontmatter.parse(text)
    if not parsed.has_block or not BOOKKEEPING_KEYS & parsed.fields.keys():
        return text
    fields = {key: value for key, value in parsed.fields.items() if key not in BOOKKEEPING_KEYS}
    return frontmatter.format(fields, parsed.body)
