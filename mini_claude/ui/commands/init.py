"""`/init`: the model looks around the project with its tools and writes a CLAUDE.md for it
(`prompts/init.md`). The write asks in every permission mode but bypass, and a standing `a`
does not cover it (see `Permissions.check_write`): the file becomes instructions for every
later conversation here, so the user reviews it, whatever a file read on the way says. Then, in a
git work tree where CLAUDE.local.md is not ignored yet, it offers to add it to .gitignore."""

from __future__ import annotations

import os

from mini_claude.app.instructions.hierarchy import INSTRUCTIONS_FILE
from mini_claude.app.instructions.local_file import LOCAL_FILE, ignore_local_file, unignored_local_file
from mini_claude.core import prompts
from mini_claude.ui.commands.registry import CommandContext, command

EXISTING = (
    "There is a CLAUDE.md already: read it first, then improve it (keep what is right and still "
    "useful, fix what is wrong or out of date) rather than starting over."
)


@command("init", "Write a CLAUDE.md for this project (shown before it is written)")
def _init(ctx: CommandContext, argument: str) -> None:
    if ctx.send is None:
        ctx.say("/init needs the REPL.")
        return
    path = ctx.session.agent.tool_context.project_dir / INSTRUCTIONS_FILE
    before = _stamp(path)
    ctx.send(prompts.render("init.md", existing=EXISTING if before is not None else ""))
    if _stamp(path) != before:
        # The system prompt was built when this conversation started.
        ctx.say(
            f"{INSTRUCTIONS_FILE} is read when a conversation starts: /clear starts one that uses it.", "dim"
        )
    root = unignored_local_file(path.parent)
    if root is not None and ctx.confirm(
        f"Add {LOCAL_FILE} (your own notes for this project, next to CLAUDE.md) to .gitignore?"
    ):
        ctx.say(ignore_local_file(root))


def _stamp(path: os.PathLike[str]) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size, info.st_ino
