"""The side model's answers during a tidy, parsed strictly: one JSON object (prose or a code fence
around it is tolerated), no NaN, no repeated keys, every field of the expected type. Whatever
does not fit is left out and said so in one line; nothing in an answer is trusted further than
that (memory/tidy/proposal.py checks what the changes would write)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mini_claude.core.files.strict_json import refuse_constant
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
    """The memories the model asks to read (`{"read": [...]}`): as one group of `parse_groups`."""
    groups, left_out = _picked([_answer_list(text, READ_KEY)], allowed, 1, limit, "the answer")
    return (groups[0] if groups else []), left_out


def parse_groups(
    text: str, allowed: Sequence[str], max_groups: int, max_members: int
) -> tuple[list[list[str]], list[str]]:
    """The groups of memories the model asks to read (`{"groups": [[...], ...]}`): only names from
    `allowed`, each in one group (the first that names it), at most `max_members` a group and
    `max_groups` groups; and one line per name or group left out."""
    return _picked(_answer_list(text, GROUPS_KEY), allowed, max_groups, max_members, "group {number}")


def _picked(
    items: list[Any], allowed: Sequence[str], max_groups: int, max_members: int, where: str
) -> tuple[list[list[str]], list[str]]:
    allowed_set, seen = set(allowed), set()
    groups: list[list[str]] = []
    left_out: list[str] = []
    for number, item in enumerate(items, 1):
        named = where.format(number=number)
        if len(groups) == max_groups:
            left_out.append(f"{len(items) - number + 1} more groups beyond {max_groups}")
            break
        if not isinstance(item, list):
            left_out.append(f"{named} is not a list of file names")
            continue
        group: list[str] = []
        for name in item:
            if not isinstance(name, str):
                shown = visible_path(json.dumps(name)[:60])
                left_out.append(f"{named} names {shown}, which is not a file name")
            elif name not in allowed_set:
                left_out.append(f"{named} names {visible_path(name)}, which is not a memory shown")
            elif name in seen:
                left_out.append(f"{named} names {visible_path(name)} again; it is read once")
            else:
                seen.add(name)
                group.append(name)
        if len(group) > max_members:
            left_out.append(f"{named} names {len(group)} memories; the first {max_members} were read")
            seen.difference_update(group[max_members:])
        if group:
            groups.append(group[:max_members])
    return groups, left_out


def parse_changes(text: str) -> tuple[list[RawChange], list[str]]:
    """The proposed changes (`{"changes": [...]}`) and one line per item left out."""
    items = _answer_list(text, CHANGES_KEY)
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


def _answer_list(text: str, key: str) -> list[Any]:
    """The list under `key` in the answer's JSON object; AnswerError when there is none."""
    items = _answer_object(text, key)[key]
    if not isinstance(items, list):
        raise AnswerError(f'"{key}" is not a list')
    return items


def _answer_object(text: str, key: str) -> dict[str, Any]:
    if not isinstance(text, str) or len(text) > ANSWER_MAX_CHARS:
        raise AnswerError("the answer is empty or too long")
    decoder = json.JSONDecoder(object_pairs_hook=_no_repeated_keys, parse_constant=refuse_constant)
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
