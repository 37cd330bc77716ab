"""`/name args` for a skill or custom command: its text becomes the message, as Claude Code makes it:

- `$ARGUMENTS` and `$1`…`$9` are filled with the words after the name;
- each !`command` the file wrote (outside its fenced code) runs first, as the run_shell tool runs
  it (by the permission rules: it asks where run_shell would ask, unless the file's
  `allowed-tools` allow it), and its output takes its place. They are found before the
  arguments are filled in: what the user pasted after the name is text, never a command;
- each `@path` attaches that file as `@` at the prompt does (app/mentions.py);
- `model` is the model of that turn, `allowed-tools` are allowed until it ends.

Nothing is sent when a command cannot run or a file cannot be attached: the lines say why.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from mini_claude.app.mentions import attach, find_mentions
from mini_claude.core.prompts import extension_text
from mini_claude.core.untrusted import attribute, visible_text, wrap
from mini_claude.extensions.skills.arguments import fill_placeholders, substitute, with_arguments_line
from mini_claude.extensions.skills.entries import Entry
from mini_claude.extensions.skills.reading import NotReadable, read_body

if TYPE_CHECKING:
    from mini_claude.app.session import Session

T = TypeVar("T")
INVOKED = re.compile(r"/([A-Za-z][\w:-]*)(?:[ \t]+(.*))?", re.DOTALL)  # `/name args` (args may span lines)
INLINE_COMMAND = re.compile(r"!`([^`\n]+)`")
FENCE = re.compile(r"^ {0,3}(```|~~~).*?(?:^ {0,3}\1[^\n]*$|\Z)", re.DOTALL | re.MULTILINE)
COMMANDS_MAX = 10  # !`…` run for one message
OUTPUT_TAG = "command-output"
KINDS = {"skill": "skill", "command": "custom command"}


@dataclass
class Prepared:
    entry: Entry
    text: str = ""  # the message: the file's text, framed and wrapped
    blocks: list[dict[str, Any]] = field(default_factory=list)  # attachments, before the message
    shown: list[str] = field(default_factory=list)  # what was run and attached, a line each
    problems: list[str] = field(default_factory=list)  # why nothing is sent


def invoked(session: Session, text: str) -> tuple[Entry, str] | None:
    """The skill or command `text` runs (`/name args`) and its arguments, or None."""
    match = INVOKED.fullmatch(text.strip())
    if match is None:
        return None
    catalog = session.extensions.catalog
    catalog.refresh()
    entry = catalog.find(match.group(1).lower())
    return (entry, match.group(2) or "") if entry is not None else None


def prepare(session: Session, entry: Entry, arguments: str) -> Prepared:
    """The message `/name arguments` sends; its `problems` say why there is none. The file's
    `allowed-tools` are allowed from here (its commands run by them) until the turn ends; when
    nothing is sent, they end here."""
    prepared = Prepared(entry)
    try:
        body = read_body(entry.path, entry.root)
    except NotReadable as problem:
        prepared.problems.append(f"/{entry.name} ({visible_text(entry.source)}) cannot be read: {problem}")
        return prepared
    approvals = session.extensions.approvals
    approvals.allow_for_turn(
        session.extensions.catalog.allowed_tools(entry), f"/{entry.name}, {entry.source}"
    )
    try:
        mentions = find_mentions(substitute(body, arguments), session.agent.tool_context.project_dir)
        text = _run_commands(session, body, arguments, prepared)
        if not prepared.problems and mentions:
            attached = attach(mentions, session.agent)
            prepared.blocks, prepared.problems = attached.blocks, attached.problems
            prepared.shown += [f"Attached {shown}" for shown in attached.shown]
    except BaseException:
        approvals.end_turn()
        raise
    if prepared.problems:
        approvals.end_turn()
        return prepared
    args = f" {arguments.strip()}" if arguments.strip() else ""
    prepared.text = extension_text(
        "user_ran", name=entry.name, arguments=attribute(args), kind=KINDS[entry.kind],
        source=attribute(entry.source), body=wrap(entry.kind, text, name=entry.name),
    )  # fmt: skip
    return prepared


def run_prepared(session: Session, prepared: Prepared, run_turn: Callable[[str], T]) -> T:
    """Send `prepared` with `run_turn` (the front end's), in the file's model if it names one;
    its `allowed-tools` end with the turn, however it ends."""
    agent = session.agent
    model, agent.model = agent.model, prepared.entry.model or agent.model
    try:
        agent.add_context(prepared.blocks)
        return run_turn(prepared.text)
    finally:
        agent.model = model
        session.extensions.approvals.end_turn()


def _run_commands(session: Session, body: str, arguments: str, prepared: Prepared) -> str:
    """`body` with its arguments filled in and each !`command` it holds outside fenced code
    replaced by its output (wrapped). Commands and fences are those of the file's own text:
    arguments are filled into them, never read for them."""
    fences = [match.span() for match in FENCE.finditer(body)]
    found = [m for m in INLINE_COMMAND.finditer(body) if not any(a <= m.start() < b for a, b in fences)]
    if len(found) > COMMANDS_MAX:
        prepared.problems.append(
            f"/{prepared.entry.name} runs {len(found)} commands; at most {COMMANDS_MAX} run for one message"
        )
        return body
    pieces: list[str] = []
    done = placeholders = 0

    def filled(piece: str) -> str:
        nonlocal placeholders
        text, count = fill_placeholders(piece, arguments)
        placeholders += count
        return text

    agent = session.agent
    for match in found:
        command = filled(match.group(1)).strip()
        result = agent.tools.run("run_shell", {"command": command}, agent.tool_context)
        shown = visible_text(command)
        if result.denied:
            prepared.problems.append(
                f"!`{shown}` was not run ({result.summary}), so /{prepared.entry.name} was not sent"
            )
            return body
        prepared.shown.append(f"Ran !`{shown}` → {visible_text(result.summary)}")
        output = result.content if isinstance(result.content, str) else ""  # the shell's is text
        pieces += [filled(body[done : match.start()]), wrap(OUTPUT_TAG, output, command=command)]
        done = match.end()
    pieces.append(filled(body[done:]))
    return with_arguments_line("".join(pieces), placeholders, arguments)
