"""The side model's answers during a tidy, parsed strictly: one JSON object (prose or a code fence
around it is tolerated), no NaN, no repeated keys, every field of the expected type. Whatever
does not fit is left out and said so in one line; nothing in an answer is trusted further than
that (memory/tidy/proposal.py checks what the changes would write)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mini_claude.core.paths import visible_path

ANSWER_MAX_CHARS = 400_000  # far above what the max_tokens of a tidy answer allow
MAX_DECODE_ATTEMPTS = 20  # `{` positions tried: garbage full of braces must not cost minutes
MAX_CHANGES_PER_ANSWER = 50
READ_KEY = "read"
GROUPS_KEY = "groups"
CHANGES_KEY = "changes"


class AnswerError(ValueError):
    """The answer holds no usable JSON object of the expected shape; the message says so."""


@dataclass(frozen=True)
class RawChange:
    """One proposed change as the model wrote it; the fields are only known to be of the right type
    or None."""

    action: str | None
    file: str | None
    content: str | None
    reason: str | None


def parse_read_request(text: str, allowed: Sequence[str], limit: int) -> tuple[list[str], list[str]]:
    """The memories the model asks to read (`{"read": [...]}`): only names from `allowed`, each
    once, at most `limit`; and one line per name left out."""
    items = _answer_object(text, READ_KEY)[READ_KEY]
    if not isinstance(items, list):
        raise AnswerError(f'"{READ_KEY}" is not a list')
    allowed_set = set(allowed)
    chosen: list[str] = []
    left_out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            left_out.append(f"asked to read {_shown(item)}, which is not a file name")
        elif item not in allowed_set:
            left_out.append(f"asked to read {visible_path(item)}, which is not a memory of this batch")
        elif item not in chosen:
            chosen.append(item)
    if len(chosen) > limit:
        left_out.append(f"asked to read {len(chosen)} memories; the first {limit} were read")
    return chosen[:limit], left_out


def parse_groups(
    text: str, allowed: Sequence[str], max_groups: int, max_members: int
) -> tuple[list[list[str]], list[str]]:
    """The groups of memories the model asks to read (`{"groups": [[...], ...]}`): only names from
    `allowed`, each in one group (the first that names it), at most `max_members` a group and
    `max_groups` groups; and one line per name or group left out."""
    items = _answer_object(text, GROUPS_KEY)[GROUPS_KEY]
    if not isinstance(items, list):
        raise AnswerError(f'"{GROUPS_KEY}" is not a list')
    allowed_set = set(allowed)
    seen: set[str] = set()
    groups: list[list[str]] = []
    left_out: list[str] = []
    for number, item in enumerate(items, 1):
        if len(groups) == max_groups:
            left_out.append(f"{len(items) - number + 1} more groups beyond {max_groups}")
            break
        if not isinstance(item, list):
            left_out.append(f"group {number} is not a list of file names")
            continue
        group: list[str] = []
        for name in item:
            if not isinstance(name, str):
                left_out.append(f"group {number} names {_shown(name)}, which is not a file name")
            elif name not in allowed_set:
                left_out.append(f"group {number} names {visible_path(name)}, which is not a memory shown")
            elif name in seen:
                left_out.append(
                    f"group {number} names {visible_path(name)} again; it is read in an earlier group"
                )
            else:
                seen.add(name)
                group.append(name)
        if len(group) > max_members:
            left_out.append(f"group {number} names {len(group)} memories; the first {max_members} were read")
            seen.difference_update(group[max_members:])
        if group:
            groups.append(group[:max_members])
    return groups, left_out


def parse_changes(text: str) -> tuple[list[RawChange], list[str]]:
    """The proposed changes (`{"changes": [...]}`) and one line per item left out."""
    items = _answer_object(text, CHANGES_KEY)[CHANGES_KEY]
    if not isinstance(items, list):
        raise AnswerError(f'"{CHANGES_KEY}" is not a list')
    changes: list[RawChange] = []
    left_out: list[str] = []
    for number, item in enumerate(items, 1):
        if len(changes) == MAX_CHANGES_PER_ANSWER:
            left_out.append(
                f"{len(items) - number + 1} more changes beyond {MAX_CHANGES_PER_ANSWER} in one answer"
            )
            break
        if not isinstance(item, dict):
            left_out.append(f"change {number} is not a JSON object")
            continue
        fields = {key: item.get(key) for key in ("action", "file", "content", "reason")}
        wrong = [key for key, value in fields.items() if value is not None and not isinstance(value, str)]
        if wrong:
            left_out.append(f"change {number}: {', '.join(wrong)} must be text")
            continue
        changes.append(RawChange(**fields))
    return changes, left_out


def _answer_object(text: str, key: str) -> dict[str, Any]:
    if not isinstance(text, str) or len(text) > ANSWER_MAX_CHARS:
        raise AnswerError("the answer is empty or too long")
    decoder = json.JSONDecoder(object_pairs_hook=_no_repeated_keys, parse_constant=_refuse_constant)
    position = text.find("{")
    attempts = 0
    while position != -1 and attempts < MAX_DECODE_ATTEMPTS:
        attempts += 1
        try:
            value, _ = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict) and key in value:
            return value
        position = text.find("{", position + 1)
    raise AnswerError(f'the answer holds no valid JSON object with "{key}"')


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"repeated key {key!r}")
        result[key] = value
    return result


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _shown(value: object) -> str:
    return visible_path(json.dumps(value)[:60])
