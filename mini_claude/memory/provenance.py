"""Who wrote a memory, and when: kept in its frontmatter, after the fields a memory is made of.

    source: model            # user (a `# note`, a file written by hand), model, tidy or import
    created: 2026-03-01T14:02:11Z
    updated: 2026-03-02T09:15:40Z
    session: 6f1c2d…         # the conversation that wrote this version
    from-files: src/db.py    # the files read in that turn: where it may have come from
    fingerprint: 3a4f…       # a digest of everything else, as mini-claude wrote it

A file whose text no longer matches its fingerprint was edited by hand since; one without a
`source` of ours was written by a person (or before mini-claude kept provenance). Either way a
person's words are in it, and a model write over it asks first (tools/memory_writer.py).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.frontmatter.codec import Frontmatter

MACHINE_SOURCES = ("model", "tidy", "import")  # their fingerprint says whether a person edited since
FINGERPRINT_KEY = "fingerprint"
PROVENANCE_KEYS = ("source", "created", "updated", "session", "from-files", FINGERPRINT_KEY)
# Written by the model along with name, description and type, and kept.
KEPT_KEYS = ("paths", "expires")
FROM_FILES_MAX = 20  # files named in `from-files`; a turn that read more names the last ones
FINGERPRINT_CHARS = 16
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True)
class Provenance:
    """Who writes this version of a memory."""

    source: str  # user, model, tidy or import
    session: str = ""
    from_files: tuple[str, ...] = ()


def stamped(
    fields: Mapping[str, str], body: str, by: Provenance, previous: Mapping[str, str] | None, now: float
) -> str:
    """The memory file's text: `fields` (without provenance keys), then who wrote it: `created`
    now for a new file, kept from the `previous` version's fields when it says (not known
    otherwise), `updated` now, a fingerprint last."""
    kept = {key: value for key, value in fields.items() if key not in PROVENANCE_KEYS and value.strip()}
    stamp = format_time(now)
    created = stamp if previous is None else previous.get("created", "")
    kept["source"] = by.source
    if parse_time(created) is not None:
        kept["created"] = created
    kept["updated"] = stamp
    if by.session:
        kept["session"] = by.session
    if by.from_files:
        kept["from-files"] = ", ".join(by.from_files[-FROM_FILES_MAX:])
    kept[FINGERPRINT_KEY] = fingerprint(kept, body)
    return frontmatter.format(kept, body)


def fingerprint(fields: Mapping[str, str], body: str) -> str:
    """The digest of a memory's text as written from `fields` (none of them the fingerprint)."""
    text = frontmatter.format(fields, body)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:FINGERPRINT_CHARS]


def written_by_hand(parsed: Frontmatter) -> bool:
    """Whether a person wrote the file or edited it since mini-claude did (see the module)."""
    fields = parsed.fields
    if not parsed.has_block or fields.get("source") not in MACHINE_SOURCES:
        return True
    rest = {key: value for key, value in fields.items() if key != FINGERPRINT_KEY}
    return fields.get(FINGERPRINT_KEY) != fingerprint(rest, parsed.body)


def without_provenance(text: str) -> str:
    """A memory's text as a person reads a change to it: the fields and body someone wrote, none
    of the lines recorded about it (which change with every save)."""
    parsed = frontmatter.parse(text)
    if not parsed.has_block:
        return text
    fields = {key: value for key, value in parsed.fields.items() if key not in PROVENANCE_KEYS}
    return frontmatter.format(fields, parsed.body)


def format_time(when: float) -> str:
    return dt.datetime.fromtimestamp(when, dt.UTC).strftime(TIME_FORMAT)


def parse_time(text: str) -> float | None:
    """Seconds since the epoch of a `created`/`updated` value (ISO 8601; a date alone is its
    midnight, UTC); None when it is none."""
    try:
        when = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp()


def listed(value: str) -> tuple[str, ...]:
    """A list field (`paths`, `from-files`): comma-separated, or `[a, b]`; quotes around items dropped."""
    inner = value.strip().removeprefix("[").removesuffix("]")
    items = (item.strip().strip("'\"").strip() for item in inner.split(","))
    return tuple(item for item in items if item)


def describe(fields: Mapping[str, str], hand_edited: bool, now: float) -> list[str]:
    """For `/memory show`: who wrote it and when, what it was read from, whether a person edited
    it since; one line each."""
    source = fields.get("source", "")
    who = {"user": "you", "model": "the model", "tidy": "a tidy", "import": "an import"}.get(source)
    lines = []
    if who is None:
        lines.append("Written by hand (it records no provenance).")
    else:
        when = _when(fields.get("updated", ""), now) or _when(fields.get("created", ""), now)
        session = fields.get("session", "")
        by = f"Written by {who}" + (f" {when}" if when else "")
        by += f" in session {session[:8]}." if session else "."
        lines.append(by + (" Edited by hand since." if hand_edited and source in MACHINE_SOURCES else ""))
        created = _when(fields.get("created", ""), now)
        if created and created != when:
            lines.append(f"First saved {created}.")
    if files := listed(fields.get("from-files", "")):
        lines.append("Saved in a turn that read: " + ", ".join(files))
    return lines


def _when(text: str, now: float) -> str:
    at = parse_time(text)
    if at is None:
        return ""
    local = dt.datetime.fromtimestamp(at)
    days = (dt.datetime.fromtimestamp(now).date() - local.date()).days
    ago = {0: "today", 1: "yesterday"}.get(days, f"{days} days ago" if days > 1 else "")
    return f"on {local:%Y-%m-%d %H:%M}" + (f" ({ago})" if ago else "")
