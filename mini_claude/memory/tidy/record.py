"""The record of one applied tidy (`tidy.json` in its trash folder): each change with the digest
of the file before it and of what the tidy wrote, which is all an undo needs to tell whether a
file is still as the tidy left it. Written before the first change (so an interrupted tidy can
be undone too), read back as untrusted: a record that does not fit is refused whole."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, TypeGuard

from mini_claude.memory.tidy.proposal import ACTIONS, Action, file_name_problem

RECORD_FORMAT = 1
STATES = ("applying", "applied", "undone")
MAX_RECORDED_CHANGES = 10_000
_DIGEST = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class RecordedChange:
    action: Action
    file_name: str
    before: str | None  # sha256 of the file before the tidy ("change", "delete")
    after: str | None  # sha256 of what the tidy wrote ("create", "change")
    before_mtime_ns: int | None = None  # the file's modification time before the tidy ("change")


@dataclass
class TidyRecord:
    at: float  # when the tidy was applied (seconds since the epoch)
    state: str
    changes: list[RecordedChange]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": RECORD_FORMAT,
            "at": self.at,
            "state": self.state,
            "changes": [
                {
                    "action": c.action,
                    "file": c.file_name,
                    "before": c.before,
                    "after": c.after,
                    "before_mtime_ns": c.before_mtime_ns,
                }
                for c in self.changes
            ],
        }


def parse_record(value: Any) -> TidyRecord:
    """The record in `value`, or ValueError saying in one line why it is not one."""
    if not isinstance(value, dict) or value.get("format") != RECORD_FORMAT:
        raise ValueError(f"not a tidy record of format {RECORD_FORMAT}")
    at, state, changes = value.get("at"), value.get("state"), value.get("changes")
    if not isinstance(at, int | float) or isinstance(at, bool) or not math.isfinite(at) or at < 0:
        raise ValueError("the record has no valid time")
    if state not in STATES:
        raise ValueError("the record has no valid state")
    if not isinstance(changes, list) or len(changes) > MAX_RECORDED_CHANGES:
        raise ValueError("the record has no valid list of changes")
    return TidyRecord(float(at), state, [_change(item, number) for number, item in enumerate(changes, 1)])


def _change(item: Any, number: int) -> RecordedChange:
    if not isinstance(item, dict) or item.get("action") not in ACTIONS:
        raise ValueError(f"change {number} of the record has no valid action")
    action, file_name = item["action"], item.get("file")
    if not isinstance(file_name, str) or file_name_problem(file_name) is not None:
        raise ValueError(f"change {number} of the record names no memory file")
    before, after = item.get("before"), item.get("after")
    wants_before, wants_after = action != "create", action != "delete"
    if wants_before != _is_digest(before) or wants_after != _is_digest(after):
        raise ValueError(f"change {number} of the record lacks a valid digest")
    mtime_ns = item.get("before_mtime_ns")
    if mtime_ns is not None and (type(mtime_ns) is not int or mtime_ns < 0):
        raise ValueError(f"change {number} of the record has no valid modification time")
    return RecordedChange(action, file_name, before, after, mtime_ns)


def _is_digest(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None
