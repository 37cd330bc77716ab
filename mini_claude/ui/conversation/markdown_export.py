"""`/export [FILE]`: the conversation as a markdown file: what you typed, the replies as written,
every tool call with its input and output in fenced blocks (a fence longer than any run of
backticks in them). Control characters are written out, as on screen: the file is safe to `cat`."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

from mini_claude.core.files.atomic import write_atomic
from mini_claude.core.untrusted import visible_lines
from mini_claude.ui.conversation.transcript_text import Entry

EXPORT_MODE = 0o600  # it holds what the conversation held: file contents, command output
HEADINGS = {"user": "## You", "reply": "## mini-claude"}


class ExportError(Exception):
    """The file cannot be written; the message says why in one line."""


def default_export_name(now: dt.datetime | None = None) -> str:
    return f"conversation-{(now or dt.datetime.now()):%Y-%m-%d-%H%M%S}.md"


def export_target(argument: str, project_dir: Path) -> Path:
    """Where `/export FILE` writes (relative to the project folder; `~` is home). Raises ExportError."""
    named = Path(os.path.expanduser(argument.strip())) if argument.strip() else Path(default_export_name())
    target = named if named.is_absolute() else project_dir / named
    if target.is_dir():
        raise ExportError(f"{target} is a folder: name a file, e.g. /export notes/session.md")
    if not target.parent.is_dir():
        raise ExportError(f"there is no folder {target.parent} to write into")
    return target


def conversation_markdown(entries: list[Entry], heading: str) -> str:
    parts = [f"# {heading}\n"]
    last_heading = ""
    for entry in entries:
        section = HEADINGS.get(entry.kind, HEADINGS["reply"] if entry.kind in ("call", "thinking") else "")
        if section and section != last_heading and entry.kind in ("user", "reply", "call", "thinking"):
            parts.append(section + "\n")
            last_heading = section
        parts.append(_entry_markdown(entry))
    return visible_lines("\n".join(parts).rstrip() + "\n")


def write_export(target: Path, text: str) -> None:
    try:
        write_atomic(target, text, mode=EXPORT_MODE)
    except OSError as error:
        raise ExportError(f"cannot write {target}: {error.strerror or error}") from None


def _entry_markdown(entry: Entry) -> str:
    if entry.kind in ("user", "reply"):
        return entry.text.strip() + "\n"
    if entry.kind == "thinking":
        return "\n".join("> " + line for line in entry.text.strip().split("\n")) + "\n"
    if entry.kind == "call":
        return f"**● {entry.title}**\n\n{_fenced(entry.text, 'json')}"
    label = f"*{entry.title}*" + (" (error)" if entry.is_error and "error" not in entry.title else "")
    return f"{label}\n\n{_fenced(entry.text, 'text')}" if entry.text.strip() else f"{label}\n"


def _fenced(text: str, language: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}\n"
