"""Memories belong to a repository, not to a path: a different repository cloned where a deleted
project was gets none of its memories (one line says so), and `mini-claude memory projects` shows
how to adopt or remove them; the same repository cloned again keeps them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir, project_state_dir
from mini_claude.core.events import Notice
from mini_claude.memory.project_record import RECORD_FILE
from tests.agent_harness import Harness
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import (
    main_calls,
    memory_text,
    result_text,
    seed_memories,
    side_queries,
    system_text,
    tool_results_in,
)


def make_repository(path: Path, what: str) -> str:
    """A repository at `path` whose first commit holds `what`; its id."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}  # fmt: skip
    path.mkdir(parents=True, exist_ok=True)
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", what]):
        if args[0] == "add":
            (path / "README.md").write_text(f"{what}\n")
        subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, env=env)
    head = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    )
    return head.stdout.strip()


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "app"
    make_repository(path, "the first app")
    monkeypatch.chdir(path)
    return path


def first_session(api_env: FakeAnthropic, app: Path) -> Path:
    """A session in `app` that records its repository; a memory saved there."""
    folder = project_memory_dir(str(app))
    seed_memories(folder, {"project_deploys.md": memory_text("deploys", "we deploy on thursdays")})
    api_env.stream_replies.append(text_reply("Hi."))
    Harness().start().turn("hello")  # one word: no recall
    return folder


def test_another_repository_at_the_same_path_does_not_get_the_memories(
    api_env: FakeAnthropic, app: Path
) -> None:
    first = make_repository  # the first app's id is recorded by its session
    folder = first_session(api_env, app)
    record = json.loads((project_state_dir(str(app)) / RECORD_FILE).read_text())
    assert record["version"] == 2 and len(record["repository"]) == 1
    shutil.rmtree(app)
    first(app, "a different app, cloned where the first one was")
    os.chdir(app)  # the folder this process stood in is gone: into the new one
    harness = Harness().start()
    target = folder / "project_new.md"
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": str(target), "content": memory_text("new")}),
            text_reply("Ok."),
        ]
    )

    harness.turn("what do you remember about deploys?")

    [line] = [n.text for n in harness.of_type(Notice) if "another repository" in n.text]
    assert line.startswith(
        f"Memory: {app} is another repository than the one its memories were kept for (first commit "
    )
    assert line.endswith("`mini-claude memory projects` shows how to adopt or remove them.")
    system = system_text(main_calls(api_env)[-2])
    assert "we deploy on thursdays" not in system and side_queries(api_env) == []  # nothing to recall from
    [result] = tool_results_in(main_calls(api_env)[-1])
    assert (
        result_text(result).startswith(f"Memory not saved: {app} is another repository")
        and not target.exists()
    )

    listed = Cli(app).run("memory", "projects")
    assert f"{app}  (another repository now: its memories are not loaded)  (this project)" in listed.stdout
    assert "`mini-claude memory projects adopt FOLDER`" in listed.stdout
    assert "another repository" in Cli(app).run("memory", "list").stderr

    adopted = Cli(app).run("memory", "projects", "adopt", project_state_dir(str(app)).name)
    assert adopted.returncode == 0, adopted.stderr
    assert "(another repository" not in Cli(app).run("memory", "projects").stdout
    assert "we deploy on thursdays" in Cli(app).run("memory", "list").stdout


def test_the_same_repository_cloned_again_keeps_its_memories(
    api_env: FakeAnthropic, app: Path, tmp_path: Path
) -> None:
    folder = first_session(api_env, app)
    copy = tmp_path / "copy"
    subprocess.run(["git", "clone", "-q", str(app), str(copy)], check=True, capture_output=True)
    shutil.rmtree(app)
    copy.rename(app)

    listed = Cli(app).run("memory", "list")

    assert listed.returncode == 0 and "we deploy on thursdays" in listed.stdout and listed.stderr == ""
    assert (folder / "project_deploys.md").exists()


def test_projects_remove_deletes_the_folder_only_when_told_to(api_env: FakeAnthropic, app: Path) -> None:
    first_session(api_env, app)
    state = project_state_dir(str(app))
    shutil.rmtree(app)
    make_repository(app, "another one")

    asked = Cli(app).run("memory", "projects", "remove", state.name)
    assert asked.returncode == 2 and "no terminal to ask on; add --yes" in asked.stderr and state.exists()
    unknown = Cli(app).run("memory", "projects", "remove", "0123456789abcdef", "--yes")
    assert unknown.returncode == 1 and "no project folder" in unknown.stderr
    removed = Cli(app).run("memory", "projects", "remove", str(app), "--yes")
    assert (
        removed.returncode == 0
        and removed.stdout.startswith(f"Removed {state.name} (")
        and not state.exists()
    )
