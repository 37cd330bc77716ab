"""`@path` in a message attaches that file (or folder) for the model to read with it.

A mention is `@` at the start of a word followed by a path, `@"a path with spaces"` quoted; not
inside backticks (code, a decorator). Each file is read by the read_file tool itself, a folder
listed by list_files, so the permission rules, size limits and refusals are exactly theirs: a
mention of `~/.ssh/id_rsa` asks as read_file would, a FIFO or a binary file is refused. A
mention of nothing that exists stays plain text (`@alice`); one that cannot be attached stops the
message, which goes back to the prompt, with one line saying why.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.paths import written_path
from mini_claude.core.untrusted import attribute, wrap

if TYPE_CHECKING:
    from mini_claude.agent.loop import Agent

MENTION = re.compile(r'(?<!\S)@(?:"([^"\n]+)"|([^\s"`]+))')
CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.DOTALL)  # fenced blocks and inline code
TRAILING_PUNCTUATION = ",.;:!?)]}'"
MAX_MENTIONS = 10  # files per message; more is a job for the model's own tools
ATTACHMENT_TAG = "attached-file"
FOLDER_PATTERN = "*"  # a folder's own entries


@dataclass
class Attached:
    blocks: list[dict[str, Any]] = field(default_factory=list)  # for the model, before the message
    shown: list[str] = field(default_factory=list)  # one line per attachment, for the user
    problems: list[str] = field(default_factory=list)  # why a mention could not be attached


def find_mentions(text: str, project_dir: os.PathLike[str] | str) -> list[str]:
    """The paths mentioned in `text` that name something on disk, once each, in order."""
    code = [match.span() for match in CODE.finditer(text)]
    found: list[str] = []
    for match in MENTION.finditer(text):
        if any(start <= match.start() < end for start, end in code):
            continue
        quoted, bare = match.group(1), match.group(2)
        path = quoted if quoted is not None else _without_trailing_punctuation(bare, project_dir)
        if path is not None and path not in found and _exists(path, project_dir):
            found.append(path)
    return found


def attach(mentions: list[str], agent: Agent) -> Attached:
    """Read each mentioned path with the agent's own tools (asking where they would ask)."""
    attached = Attached()
    if len(mentions) > MAX_MENTIONS:
        attached.problems.append(
            f"{len(mentions)} files mentioned; at most {MAX_MENTIONS} go with one message."
        )
        return attached
    for path in mentions:
        folder = os.path.isdir(written_path(path, agent.tool_context.project_dir))
        if folder:
            result = agent.tools.run(
                "list_files", {"pattern": FOLDER_PATTERN, "path": path}, agent.tool_context
            )
        else:
            result = agent.tools.run("read_file", {"file_path": path}, agent.tool_context)
        if result.is_error:
            attached.problems.append(f"@{path} not attached: {result.summary}")
            continue
        key = "attached_folder" if folder else "attached_file"
        body = prompts.fill(
            prompts.load_toml("prompt_input.toml")[key].strip(),
            path=attribute(path),
            content=wrap(ATTACHMENT_TAG, result.text, path=path),
        )
        attached.blocks.append({"type": "text", "text": body})
        attached.shown.append(f"@{path} ({result.summary})")
    return attached


def _without_trailing_punctuation(bare: str, project_dir: os.PathLike[str] | str) -> str | None:
    """`@README.md,` names README.md: the punctuation is dropped when only the path without it exists."""
    if _exists(bare, project_dir):
        return bare
    stripped = bare.rstrip(TRAILING_PUNCTUATION)
    return stripped if stripped and stripped != bare else None


def _exists(path: str, project_dir: os.PathLike[str] | str) -> bool:
    try:
        return os.path.lexists(written_path(path, Path(project_dir)))
    except (ToolError, ValueError, OSError):  # a NUL byte or a line break: no such file
        return False
