"""What the tests of skills, commands and hooks share: writing real hook scripts, settings files,
skill folders and command files into the test's project and home, and a session built from them
as mini-claude builds one (the settings files read, folder trust decided)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from mini_claude.app.settings.configure import Flags, configure
from mini_claude.app.settings.trust import TrustStore
from mini_claude.core.events import Notice
from tests.agent_harness import Harness


def hook_script(folder: Path, name: str, body: str, *, executable: bool = True) -> Path:
    """A bash script `name` in `folder` (created), executable unless said otherwise."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/usr/bin/env bash\n" + body.strip() + "\n")
    path.chmod(0o755 if executable else 0o644)
    return path


def hooks_settings(folder: Path, hooks: dict[str, list[dict[str, Any]]], **more: Any) -> Path:
    """`folder`/.claude/settings.json holding `hooks` (Claude Code's format) and `more` keys."""
    path = folder / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks, **more}))
    return path


def command_hook(
    event: str, command: str, matcher: str | None = None, timeout: float | None = None
) -> dict[str, Any]:
    hook: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    group: dict[str, Any] = {"hooks": [hook]}
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group]}


def skill(base: Path, name: str, description: str | None, body: str, **fields: str) -> Path:
    """`base`/.claude/skills/NAME/SKILL.md (base: the project or home); fields as written."""
    folder = base / ".claude" / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        f"{key}: {value}"
        for key, value in {"description": description, **fields}.items()
        if value is not None
    ]
    path = folder / "SKILL.md"
    path.write_text("---\n" + "\n".join(lines) + "\n---\n" + body)
    return path


def command_file(base: Path, name: str, body: str, **fields: str) -> Path:
    """`base`/.claude/commands/NAME.md (NAME may hold folders: `frontend/component`)."""
    path = base / ".claude" / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = (
        "---\n" + "".join(f"{key}: {value}\n" for key, value in fields.items()) + "---\n" if fields else ""
    )
    path.write_text(header + body)
    return path


def configured_harness(
    *, trusted: bool = True, answers: list[str] | None = None, interactive: bool = True
) -> Harness:
    """A session from the settings files of the working directory (the project), as the program
    reads them; the folder trusted or not."""
    store = TrustStore()
    settings = configure(Flags(trust_folder=trusted), trust=store)
    harness = Harness(answers=list(answers or []))
    return harness.start(configured=settings, interactive=interactive)


def notices(harness: Harness) -> list[str]:
    return [event.text for event in harness.of_type(Notice)]


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as stat_file:
            return stat_file.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def executable(path: Path) -> bool:
    return bool(os.stat(path).st_mode & stat.S_IXUSR)
