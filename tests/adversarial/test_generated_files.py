"""Files mini-claude writes on its own (MEMORY.md, `.lock`, memories) and the memory folder
itself, when something planted a symlink, FIFO, device or folder there: a symlink is replaced,
never written through; nothing outside the memory folder is read, created or changed; a memory
folder that is a symlink out is not a memory folder at all; the user is told in one line.

Files mini-claude reads on its own (CLAUDE.md, the history, memory bodies): test_startup_files.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mini_claude.core import config
from mini_claude.core.events import Notice
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot, snapshot_but_transcripts
from tests.agent_harness import Harness
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import (
    last_result_in_conversation,
    main_calls,
    memory_text,
    must_finish_within,
    prompt_index_lines,
    system_text,
)
from tests.tool_harness import Tools

SECRET = "PLANTED-5c0a9"


@pytest.fixture
def home(isolated_env: Path) -> Path:
    home = isolated_env.resolve()
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    (home / ".bashrc").write_text("# my shell settings\n")
    return home


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    return config.project_memory_dir()


def with_a_memory(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "project_a_fact.md").write_text(memory_text("a fact", "deploys go out on Thursdays"))


def first_message(api_env: FakeAnthropic, harness: Harness | None = None) -> tuple[Harness, str]:
    harness = harness or Harness().start()
    api_env.stream_replies.append(text_reply("Answered."))
    with must_finish_within(20):
        ended = harness.turn("hello there")
    assert ended.final_text == "Answered.", harness.events
    return harness, system_text(main_calls(api_env)[-1])


def warnings_of(harness: Harness) -> list[str]:
    return [notice.text for notice in harness.of_type(Notice) if notice.level == "warning"]


def model_calls(harness: Harness, api_env: FakeAnthropic, tool: str, **tool_input: object) -> str:
    api_env.stream_replies.extend([tool_reply(tool, tool_input), text_reply("Done.")])
    with must_finish_within(20):
        harness.turn("please do it")
    api_env.stream_replies.clear()  # a no ended the turn before the model's last reply was asked for
    return last_result_in_conversation(harness.session.agent.messages)


def assert_index_is_a_regular_file_listing(folder: Path, *names: str) -> None:
    index = folder / "MEMORY.md"
    assert not index.is_symlink() and index.is_file()
    text = index.read_text()
    assert text.startswith("# Memory index\n")
    for name in names:
        assert f"[{name}]" in text, text


# --- MEMORY.md ------------------------------------------------------------------------------------


@case(
    "memory",
    "MEMORY.md a symlink (to ~/.bashrc, to another memory, dangling to ~/.ssh/authorized_keys): "
    "start-up replaces the link with the index; the target is untouched or never created",
)
@pytest.mark.parametrize("target", ["bashrc", "another_memory", "dangling_authorized_keys"])
def test_memory_md_symlink_is_replaced_not_written_through(
    api_env: FakeAnthropic, memory_dir: Path, home: Path, target: str
) -> None:
    with_a_memory(memory_dir)
    (memory_dir / "project_other.md").write_text(memory_text("another", "a second memory"))
    victim = {
        "bashrc": home / ".bashrc",
        "another_memory": memory_dir / "project_other.md",
        "dangling_authorized_keys": home / ".ssh" / "authorized_keys",
    }[target]
    before = victim.read_bytes() if victim.exists() else None
    (memory_dir / "MEMORY.md").symlink_to(victim)

    harness, system = first_message(api_env)

    assert (victim.read_bytes() if victim.exists() else None) == before
    assert_index_is_a_regular_file_listing(memory_dir, "a fact", "another")
    assert "deploys go out on Thursdays" in system
    assert warnings_of(harness) == []


@case(
    "memory",
    "MEMORY.md a FIFO or a symlink to /dev/zero: start-up never hangs and replaces it with the index",
)
@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_memory_md_special_file_is_replaced(api_env: FakeAnthropic, memory_dir: Path, kind: str) -> None:
    with_a_memory(memory_dir)
    if kind == "fifo":
        os.mkfifo(memory_dir / "MEMORY.md")
    else:
        (memory_dir / "MEMORY.md").symlink_to("/dev/zero")

    harness, system = first_message(api_env)

    assert_index_is_a_regular_file_listing(memory_dir, "a fact")
    assert "deploys go out on Thursdays" in system
    assert warnings_of(harness) == []


@case(
    "memory",
    "MEMORY.md a folder: one warning saying it cannot be written; the prompt still lists the memories",
)
def test_memory_md_that_is_a_folder(api_env: FakeAnthropic, memory_dir: Path) -> None:
    with_a_memory(memory_dir)
    (memory_dir / "MEMORY.md").mkdir()

    harness, system = first_message(api_env)

    [warning] = warnings_of(harness)
    assert warning.startswith("Memory index not refreshed: cannot write MEMORY.md: ") and "\n" not in warning
    assert "deploys go out on Thursdays" in "\n".join(prompt_index_lines(system))
    assert (memory_dir / "MEMORY.md").is_dir()


# --- the lock --------------------------------------------------------------------------------------


@case(
    "memory",
    "`.lock` a symlink (to ~/.bashrc, dangling into ~/.ssh) or a FIFO: replaced by a lock file; "
    "start-up and saves work; nothing outside opened, changed or created",
)
@pytest.mark.parametrize("kind", ["symlink_to_bashrc", "dangling_into_ssh", "fifo"])
def test_lock_file_planted_as_something_else(
    api_env: FakeAnthropic, memory_dir: Path, home: Path, kind: str
) -> None:
    with_a_memory(memory_dir)
    lock = memory_dir / ".lock"
    if kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.symlink_to(home / ".bashrc" if kind == "symlink_to_bashrc" else home / ".ssh" / "rc")
    home_before = {
        path: state for path, state in snapshot_but_transcripts(home).items() if "/memory/" not in path
    }

    harness, _ = first_message(api_env)
    result = model_calls(
        harness,
        api_env,
        "write_file",
        file_path=str(memory_dir / "project_new.md"),
        content=memory_text("a new fact", "tests run in CI"),
    )

    assert result.startswith("Saved new memory 'a new fact'"), result
    assert warnings_of(harness) == [] and harness.questions == []
    assert not lock.is_symlink() and lock.is_file()
    after = {path: state for path, state in snapshot_but_transcripts(home).items() if "/memory/" not in path}
    assert after == home_before


# --- the memory folder itself ------------------------------------------------------------------------


def plant_memory_folder(memory_dir: Path, home: Path, project: Path, tmp_path: Path, target: str) -> Path:
    """Make the memory folder a symlink to `target`, holding a planted memory; returns the target."""
    folder = {
        "home": home,
        "ssh": home / ".ssh",
        "project": project,
        "outside": tmp_path.resolve() / "elsewhere",
    }[target]
    folder.mkdir(exist_ok=True)
    (folder / "project_planted.md").write_text(memory_text("planted", f"planted description {SECRET}"))
    memory_dir.parent.mkdir(parents=True)
    memory_dir.symlink_to(folder, target_is_directory=True)
    return folder


@case(
    "memory",
    "the memory folder a symlink out (to ~, ~/.ssh, the project, elsewhere): one warning naming "
    "where it points, told once; nothing there read, indexed or created; the prompt has no memories",
)
@pytest.mark.parametrize("target", ["home", "ssh", "project", "outside"])
def test_memory_folder_that_is_a_symlink_out(
    api_env: FakeAnthropic, memory_dir: Path, home: Path, project_dir: Path, tmp_path: Path, target: str
) -> None:
    folder = plant_memory_folder(memory_dir, home, project_dir, tmp_path, target)
    before = snapshot_but_transcripts(folder)

    harness, system = first_message(api_env)
    told = warnings_of(harness)
    api_env.stream_replies.append(text_reply("Still here."))
    harness.session.agent.clear()  # a new conversation builds its prompt again
    harness.turn("and again")

    assert told == [
        f"Memory index not refreshed: the memory directory {memory_dir} is a symlink to {folder}, "
        f"outside {memory_dir.parent}: memories are off until it is removed"
    ]
    assert warnings_of(harness) == []
    assert snapshot_but_transcripts(folder) == before
    assert "(No memories saved yet.)" in system
    for request in api_env.requests:
        assert SECRET not in str(request.body)


@case(
    "memory",
    "the memory folder a symlink out: reading or writing through it is judged as its target "
    "(asked; 'n' → the key never sent, nothing written), never a free memory write",
)
@pytest.mark.parametrize("target", ["ssh", "project"])
def test_memory_folder_symlink_out_is_not_the_free_memory_folder(
    api_env: FakeAnthropic, memory_dir: Path, home: Path, project_dir: Path, tmp_path: Path, target: str
) -> None:
    folder = plant_memory_folder(memory_dir, home, project_dir, tmp_path, target)
    harness = Harness().start()
    harness.answers.extend(["n", "n"])
    before = snapshot(folder)

    read = model_calls(harness, api_env, "read_file", file_path=str(memory_dir / "project_planted.md"))
    written = model_calls(
        harness,
        api_env,
        "write_file",
        file_path=str(memory_dir / "project_x.md"),
        content=memory_text("x", "a memory"),
    )

    # Named through ~/.mini-claude, both calls are judged as a home dotfile too, whatever the
    # folder leads to (the git and dotfile rules judge the path as written as well as resolved).
    reasons = [question.reason for question in harness.questions]
    assert reasons == ["a dotfile in your home folder"] * 2
    assert "refused permission" in read and SECRET not in read
    assert "refused permission" in written
    assert snapshot(folder) == before


@case(
    "memory",
    "the memory folder a symlink to a folder beside it (inside its project's folder): a memory "
    "folder as usual; saves free and indexed there",
)
def test_memory_folder_symlinked_beside_itself_works(api_env: FakeAnthropic, memory_dir: Path) -> None:
    real = memory_dir.parent / "memory-real"
    with_a_memory(real)
    memory_dir.symlink_to(real, target_is_directory=True)

    harness, system = first_message(api_env)
    result = model_calls(
        harness,
        api_env,
        "write_file",
        file_path=str(memory_dir / "project_new.md"),
        content=memory_text("a new fact", "tests run in CI"),
    )

    assert "deploys go out on Thursdays" in system
    assert result.startswith("Saved new memory"), result
    assert harness.questions == [] and warnings_of(harness) == []
    assert_index_is_a_regular_file_listing(real, "a fact", "a new fact")


# --- memory files -----------------------------------------------------------------------------------


@case(
    "memory",
    "a dangling symlink out where a new memory's file name would go: the memory goes to a free "
    "name; the link's target is never created",
)
def test_new_memory_never_lands_on_a_dangling_symlink(
    api_env: FakeAnthropic, memory_dir: Path, home: Path
) -> None:
    memory_dir.mkdir(parents=True)
    planted = home / ".ssh" / "authorized_keys"
    (memory_dir / "project_a_fact.md").symlink_to(planted)
    harness = Harness().start()

    result = model_calls(
        harness,
        api_env,
        "write_file",
        file_path=str(memory_dir / "notes.md"),
        content=memory_text("a fact", "deploys go out on Thursdays"),
    )

    assert result.startswith("Saved new memory 'a fact'") and "project_a_fact_2.md" in result, result
    assert not planted.exists()
    assert os.readlink(memory_dir / "project_a_fact.md") == str(planted)
    assert_index_is_a_regular_file_listing(memory_dir, "a fact")


# --- the file tools -----------------------------------------------------------------------------------


@case(
    "paths",
    "write_file/edit_file on a project symlink a.txt -> b.txt: the question names b.txt, and b.txt "
    "is what gets written (the link stays)",
)
@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_file_tools_write_the_approved_target_of_a_symlink(project_dir: Path, tool: str) -> None:
    project = project_dir.resolve()
    (project / "b.txt").write_text("old text\n")
    (project / "a.txt").symlink_to("b.txt")
    tools = Tools(project, "ask", "y")

    if tool == "write_file":
        result = tools.run("write_file", file_path="a.txt", content="new text\n")
    else:
        result = tools.run("edit_file", file_path="a.txt", old_string="old", new_string="new")

    assert not result.is_error, result.content
    [question] = tools.user.questions
    assert question.target == str(project / "b.txt")
    assert (project / "b.txt").read_text() == "new text\n"
    assert os.readlink(project / "a.txt") == "b.txt"
