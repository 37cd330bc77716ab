"""`#note` at the prompt: the note becomes a memory. One side query (`prompts/memory_note.md`)
gives it a name, a description, a type and a body; the memory writer then saves it under the
same rules as every memory write (frontmatter, no secrets, its file name, the index rebuilt).
Whatever goes wrong is said in one line; the note stays in the input history (Up brings it back)."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.paths import visible_path
from mini_claude.core.untrusted import wrap
from mini_claude.llm.model_errors import ModelError
from mini_claude.memory.listing import NAME_MAX_CHARS
from mini_claude.memory.store.index import clean_inline
from mini_claude.memory.store.naming import name_key
from mini_claude.safety.secrets.check import find_secret
from mini_claude.tools.memory_writer import MemoryStoreWriter

if TYPE_CHECKING:
    from rich.console import Console

    from mini_claude.app.session import Session

NOTE_MAX_CHARS = 4_000  # a note is a line or two; a longer text is a message, or a memory to edit by hand
NOTE_MAX_TOKENS = 1_000  # of the side query's answer
DESCRIPTION_MAX_CHARS = 150
FIELDS = ("name", "description", "type", "body")
RETRY_HINT = "Press Up to get the note back, to change it or try again."


class NoteRefused(Exception):
    """Why the note was not saved: one line for the user."""


def is_memory_note(text: str) -> bool:
    """`# remember this` on one line; a pasted markdown document starting with `# Title` is a message."""
    return text.startswith("#") and "\n" not in text.strip()


def save_memory_note(text: str, session: Session, console: Console) -> None:
    """Save the note after the `#`; KeyboardInterrupt (Esc, Ctrl+C) stops the side query."""
    note = text.removeprefix("#").strip()
    if not note:
        console.print("Type what to remember after the #, e.g. # the staging database is db-2", style="red")
        return
    try:
        file_name, fields = _save(note, session)
    except NoteRefused as refused:
        console.print(f"Memory not saved: {refused} {RETRY_HINT}", style="red", highlight=False)
        return
    shown = f"[{fields['type']}] {clean_inline(fields['name'], NAME_MAX_CHARS)}"
    console.print(
        f"Saved memory {file_name}: {shown} (/memory edit {file_name} to change it)", highlight=False
    )


def _save(note: str, session: Session) -> tuple[str, dict[str, str]]:
    """The new memory's file name (made visible) and its header fields."""
    if len(note) > NOTE_MAX_CHARS:
        raise NoteRefused(f"the note is over {NOTE_MAX_CHARS:,} characters; a memory is a short note.")
    if secret := find_secret(note):  # before the side query: a secret is not even sent
        raise NoteRefused(f"the note looks like it contains {secret}; memories never hold secrets.")
    system = prompts.render(
        "memory_note.md", max_description_chars=DESCRIPTION_MAX_CHARS, today=dt.date.today().isoformat()
    )
    try:
        answer = session.llm.side_query(system=system, user=wrap("note", note), max_tokens=NOTE_MAX_TOKENS)
    except ModelError as error:
        raise NoteRefused(f"{error}".rstrip(".") + ".") from error
    fields = _fields(answer)
    fields["name"] = _free_name(session, fields["name"])
    body = fields.pop("body").strip() + "\n"
    try:
        written = MemoryStoreWriter(session.store).write(frontmatter.format(fields, body))
    except ToolError as error:
        raise NoteRefused(_first_sentence(str(error).removeprefix("Memory not saved: "))) from error
    return visible_path(written.path.name), fields


def _fields(answer: str) -> dict[str, str]:
    """The memory's fields from the side query's JSON answer (a code fence around it is fine)."""
    start, end = answer.find("{"), answer.rfind("}")
    try:
        parsed = json.loads(answer[start : end + 1]) if 0 <= start < end else None
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise NoteRefused("the model's answer was not a memory (no JSON object in it).")
    missing = [key for key in FIELDS if not isinstance(parsed.get(key), str) or not parsed[key].strip()]
    if missing:
        raise NoteRefused(f"the model's answer lacked {', '.join(missing)}.")
    return {key: " ".join(parsed[key].split()) if key != "body" else parsed[key] for key in FIELDS}


def _free_name(session: Session, name: str) -> str:
    """`name`, or `name (2)`… when a memory has it: a note adds a memory, it never overwrites one."""
    taken = {name_key(memory.name) for memory in session.store.scan() if memory.problem is None}
    candidate, number = name, 2
    while name_key(candidate) in taken:
        candidate, number = f"{name} ({number})", number + 1
    return candidate


def _first_sentence(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else "unknown reason"
    return first.split(". ")[0].rstrip(".") + "."
