"""The `skill` tool: the model loads a skill by name and gets its instructions (its `$ARGUMENTS`
filled), wrapped in a tag they cannot leave, with the skill's folder and the files in it, so it
can read them. The skill's `allowed-tools` hold from then until the turn ends. Rules naming the
tool (`Skill`) hold for it: a deny rule refuses every skill; without one, loading asks nothing."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError
from mini_claude.core.prompts import extension_text
from mini_claude.core.untrusted import attribute, wrap
from mini_claude.extensions.approvals import Approvals
from mini_claude.extensions.skills.arguments import substitute
from mini_claude.extensions.skills.catalog import Catalog
from mini_claude.extensions.skills.entries import Entry
from mini_claude.extensions.skills.reading import NotReadable, read_body
from mini_claude.tools.base import ToolContext, ToolResult

SKILL_TAG = "skill"
FILES_SHOWN = 30  # of a skill's folder, named to the model
FILES_LOOKED_AT = 500


def definition() -> dict[str, Any]:
    return dict(prompts.load_toml("extensions.toml")["skill_tool"])


def skill_tool(catalog: Catalog, approvals: Approvals) -> Callable[..., ToolResult]:
    """The tool's handler, bound to the session's skills and approvals."""

    def load_skill(ctx: ToolContext, name: str, arguments: str = "") -> ToolResult:
        catalog.refresh()
        entry = catalog.skill(name.strip().removeprefix("/"))
        if entry is None:
            available = ", ".join(skill.name for skill in catalog.model_skills()) or "none"
            raise ToolError(extension_text("skill_unknown", name=attribute(name), available=available))
        if not entry.model_invocable:
            raise ToolError(extension_text("skill_user_only", name=entry.name))
        ctx.permissions.check_tool("skill", entry.name, f"load the skill {entry.name}", changes=False)
        try:
            body = read_body(entry.path, entry.root)
        except NotReadable as problem:
            raise ToolError(
                extension_text("skill_unreadable", name=entry.name, problem=attribute(str(problem)))
            ) from None
        approvals.allow_for_turn(catalog.allowed_tools(entry), f"skill {entry.name}, {entry.source}")
        return ToolResult(loaded_text(entry, substitute(body, arguments)), f"loaded {entry.name}")

    return load_skill


def loaded_text(entry: Entry, body: str) -> str:
    """What the model reads of a loaded skill."""
    names = _files(entry)
    files = extension_text("skill_files", names=", ".join(names)) if names else ""
    return extension_text(
        "skill_loaded", name=entry.name, source=attribute(entry.source), folder=attribute(str(entry.folder)),
        files=files, body=wrap(SKILL_TAG, body, name=entry.name),
    )  # fmt: skip


def _files(entry: Entry) -> list[str]:
    """The other files of a skill's folder (relative, a level of subfolders), at most FILES_SHOWN."""
    found: list[str] = []
    looked = 0
    for folder, subfolders, names in os.walk(entry.folder):
        depth = os.path.relpath(folder, entry.folder).count(os.sep) + (folder != str(entry.folder))
        subfolders[:] = sorted(name for name in subfolders if not name.startswith(".")) if depth < 2 else []
        for name in sorted(names):
            looked += 1
            relative = os.path.relpath(os.path.join(folder, name), entry.folder)
            if relative != entry.path.name and not name.startswith("."):
                found.append(attribute(relative))
        if looked > FILES_LOOKED_AT or len(found) > FILES_SHOWN:
            break
    return found[:FILES_SHOWN] + (["…"] if len(found) > FILES_SHOWN else [])
