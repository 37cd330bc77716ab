"""The model's writes into the memory directory: free of permission questions (over its own
memories), but validated, kept inside the directory, secret-free, stamped with who wrote them and
always reflected in MEMORY.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.core.errors import ToolError
from mini_claude.memory.listing import list_lines
from mini_claude.memory.provenance import Provenance, without_provenance
from mini_claude.tools.memory_writer import MemoryStoreWriter
from tests.agent_harness import Harness
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import main_calls, memory_text, result_text, tool_results_in
from tests.tool_harness import Tools

NOTHING_SELECTED = '{"selected_memories": []}'  # the recall side query's answer

MEMORY = """---
name: integration tests hit a real database
description: never mock the database in integration tests
type: feedback
---
A mocked test hid a broken migration.
"""


@pytest.fixture
def tools(project_dir: Path) -> Tools:
    return Tools(project_dir)


# --- through a real session ----------------------------------------------------------------------


def test_model_saves_a_memory_with_write_file_without_a_permission_question(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    memory_dir = harness.session.store.root
    target = memory_dir / "feedback_integration_tests_hit_a_real_database.md"
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": str(target), "content": MEMORY}), text_reply("Saved.")]
    )

    ended = harness.turn("remember: never mock the database in integration tests")

    assert ended.reason == "done"
    assert harness.questions == []
    [result] = tool_results_in(main_calls(api_env)[1])
    assert not result.get("is_error"), result_text(result)
    assert "Saved new memory" in result_text(result)
    written = target.read_text(encoding="utf-8")
    assert without_provenance(written) == MEMORY and "\nsource: model\n" in written
    index = (memory_dir / "MEMORY.md").read_text(encoding="utf-8")
    assert (
        f"- **[integration tests hit a real database]({target.name})** (feedback) — "
        "never mock the database in integration tests"
    ) in index


def test_model_edits_a_memory_in_place_and_the_index_follows(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    store = harness.session.store
    saved = store.save(
        name="deploy day",
        description="we deploy on Tuesdays",
        memory_type="project",
        body="x\n",
        by=Provenance("model"),  # its own: no question (a person's would ask)
    )
    edit = {"file_path": str(saved.path), "old_string": "on Tuesdays", "new_string": "on Thursdays"}
    api_env.stream_replies.extend([tool_reply("edit_file", edit), text_reply("Updated.")])
    api_env.plain_replies.append(text_reply(NOTHING_SELECTED))

    harness.turn("we moved deploys to Thursday, update your memory")

    assert harness.questions == []
    [result] = tool_results_in(main_calls(api_env)[1])
    assert not result.get("is_error"), result_text(result)
    assert [m.file_name for m in store.scan()] == [saved.path.name]
    assert "description: we deploy on Thursdays" in saved.path.read_text()
    index = (store.root / "MEMORY.md").read_text()
    assert "we deploy on Thursdays" in index and "Tuesdays" not in index


def test_a_shell_command_deleting_or_adding_memory_files_rebuilds_the_index(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    harness = Harness().start(permission_mode="bypass")
    store = harness.session.store
    doomed = store.save(name="doomed", description="to be removed", memory_type="project", body="x\n")
    store.save(name="kept", description="stays", memory_type="project", body="x\n")
    added = store.root / "user_from_shell.md"
    new_memory = memory_text("from shell", "made by a command", "user")
    command = f"rm '{doomed.path}' && cat > '{added}' <<'EOF'\n{new_memory}EOF\n"
    api_env.stream_replies.extend([tool_reply("run_shell", {"command": command}), text_reply("Done.")])
    api_env.plain_replies.append(text_reply(NOTHING_SELECTED))

    harness.turn("forget the doomed memory")

    assert not doomed.path.exists() and added.exists()
    index = (store.root / "MEMORY.md").read_text()
    assert "doomed" not in index
    assert "[kept]" in index and "[from shell](user_from_shell.md)" in index


# --- through the tools ---------------------------------------------------------------------------


def test_writing_memory_needs_no_permission_even_in_ask_mode(tools: Tools) -> None:
    result = tools.write(tools.memory_dir / "project_a_fact.md", memory_text())

    assert not result.is_error, result.content
    assert tools.user.questions == []
    assert "[a fact](project_a_fact.md)" in tools.index()


def test_a_write_reaching_the_memory_dir_through_a_symlink_is_still_a_memory_write(
    tools: Tools, project_dir: Path
) -> None:
    tools.memory_dir.mkdir(parents=True)
    (project_dir / "mem").symlink_to(tools.memory_dir)

    result = tools.write("mem/project_a_fact.md", memory_text())
    again = tools.write(str(tools.memory_dir / "x" / ".." / "project_other.md"), memory_text("other"))

    assert not result.is_error and not again.is_error, (result.content, again.content)
    assert tools.user.questions == []
    assert "[a fact](project_a_fact.md)" in tools.index() and "[other](project_other.md)" in tools.index()


def test_memory_files_are_named_by_type_and_name_whatever_path_the_model_picks(tools: Tools) -> None:
    result = tools.write(tools.memory_dir / "notes.md", memory_text("Role", "senior Go engineer", "user"))

    assert not result.is_error
    assert tools.memory_files() == ["user_role.md"]
    assert "user_role.md" in result.content
    # The tool line the user sees says where it went, not only that it was saved.
    assert result.summary == "saved new memory, saved as user_role.md (not notes.md)"

    same = tools.write(tools.memory_dir / "user_role.md", memory_text("Role", "staff Go engineer", "user"))
    assert same.summary == "updated memory user_role.md"  # the name it asked for: nothing to report


def test_writing_the_same_name_again_updates_that_memory(tools: Tools) -> None:
    tools.write(tools.memory_dir / "user_role.md", memory_text("Role", "Go engineer", "user"))
    result = tools.write(tools.memory_dir / "user_role2.md", memory_text("role", "Rust engineer", "user"))

    assert not result.is_error and result.content.startswith("Updated")
    assert result.summary == "updated memory, saved as user_role.md (not user_role2.md)"
    assert tools.memory_files() == ["user_role.md"]
    assert "Rust engineer" in tools.index() and "Go engineer" not in tools.index()


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_writing_memory_md_directly_is_refused(tools: Tools, tool: str) -> None:
    tools.write(tools.memory_dir / "project_a_fact.md", memory_text())
    before = tools.index()

    if tool == "write_file":
        result = tools.write(tools.memory_dir / "MEMORY.md", "# Memory index\n- my own line\n")
    else:
        result = tools.run(
            "edit_file",
            file_path=str(tools.memory_dir / "MEMORY.md"),
            old_string="# Memory index",
            new_string="# Mine",
        )

    assert result.is_error
    assert "MEMORY.md is generated" in result.content
    assert tools.index() == before


def test_a_path_escaping_the_memory_dir_with_dotdot_is_not_a_free_memory_write(tools: Tools) -> None:
    escaping = tools.memory_dir / ".." / "project_escape.md"

    result = tools.write(escaping, memory_text())

    assert result.is_error
    [question] = tools.user.questions  # it is an ordinary (protected) file now, so the user is asked
    assert question.target == str(tools.memory_dir.parent / "project_escape.md")
    assert not (tools.memory_dir.parent / "project_escape.md").exists()
    with pytest.raises(ToolError, match="directly in"):
        MemoryStoreWriter(tools.store).save(escaping, memory_text(), edit=False)
    assert not (tools.memory_dir.parent / "project_escape.md").exists()


def test_a_memory_in_a_subfolder_is_refused(tools: Tools) -> None:
    result = tools.write(tools.memory_dir / "sub" / "project_a_fact.md", memory_text())

    assert result.is_error
    assert f"go directly in {tools.memory_dir}" in result.content
    assert tools.user.questions == []
    assert not (tools.memory_dir / "sub").exists()


def test_a_symlink_in_the_memory_dir_pointing_outside_is_never_written_through_for_free(
    tools: Tools, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("outside, untouched\n")
    tools.memory_dir.mkdir(parents=True)
    link = tools.memory_dir / "project_link.md"
    link.symlink_to(outside)

    result = tools.write(link, memory_text())
    direct = tools.store
    with pytest.raises(ToolError):
        MemoryStoreWriter(direct).save(link, memory_text(), edit=False)
    tools.store.rebuild_index()

    assert result.is_error
    assert len(tools.user.questions) == 1 and tools.user.questions[0].target == str(outside)
    assert outside.read_text() == "outside, untouched\n"
    assert "project_link.md" not in tools.index()
    assert any(
        "project_link.md" in line and "outside the memory directory" in line for line in list_lines(direct)
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("Just a note without a header.\n", "no frontmatter block (--- … ---) at the top"),
        ("---\nname: x\ndescription: y\ntype: project\nnever closed\n", "opened with --- but never closed"),
        ("---\nname: x\ntype: project\n---\nbody\n", "lacks description"),
        ("---\ndescription: y\ntype: project\n---\nbody\n", "lacks name"),
        ("---\nname: x\ndescription: y\n---\nbody\n", "lacks type"),
        ("---\nname: x\ndescription: y\ntype: todo\n---\nbody\n", "'todo' is not one of user, feedback"),
    ],
)
def test_invalid_frontmatter_or_unknown_type_is_refused_with_the_format_explained(
    tools: Tools, content: str, reason: str
) -> None:
    result = tools.write(tools.memory_dir / "project_x.md", content)

    assert result.is_error
    assert reason in result.content
    for part in ("---\nname: ", "description: ", "type: ", "user, feedback, project, reference"):
        assert part in result.content
    assert tools.memory_files() == []


SECRETS = [
    ("key: sk-ant-api03-" + "a1B2c3D4" * 6, "an Anthropic token (sk-ant-…)"),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----",
        "a private key",
    ),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "a private key"),
    ("aws AKIA" + "ABCDEFGHIJKLMNOP", "an AWS access key"),
    ("token ghp_" + "R8sT2vXq9LmN4bKj7HwZ1cPd6FyGa3Eu0Qo5", "a GitHub token (ghp_…)"),
    ("password = hunter2hunter2hunter2", "a password (the value of password)"),
]


@pytest.mark.parametrize(("secret", "kind"), SECRETS)
def test_a_memory_holding_a_secret_is_refused_saying_why(tools: Tools, secret: str, kind: str) -> None:
    result = tools.write(tools.memory_dir / "reference_keys.md", memory_text("keys", body=secret + "\n"))

    assert result.is_error
    assert f"looks like it contains {kind}" in result.content
    assert "Never store API keys" in result.content
    assert tools.memory_files() == []


def test_an_edit_adding_a_secret_is_refused_and_the_memory_is_unchanged(tools: Tools) -> None:
    tools.write(tools.memory_dir / "reference_api.md", memory_text("api", body="The key is in $API_KEY.\n"))
    path = tools.memory_dir / "project_api.md"
    before = path.read_bytes()

    result = tools.run(
        "edit_file",
        file_path=str(path),
        old_string="in $API_KEY",
        new_string="sk-ant-api03-" + "Z9y8X7w6" * 6,
    )

    assert result.is_error and "an Anthropic token" in result.content
    assert path.read_bytes() == before


def test_an_ordinary_secret_free_memory_mentioning_keys_is_fine(tools: Tools) -> None:
    body = "The API key lives in the ANTHROPIC_API_KEY variable; never paste it.\n"
    result = tools.write(tools.memory_dir / "reference_keys.md", memory_text("where keys live", body=body))

    assert not result.is_error, result.content


def test_a_header_too_long_to_index_is_refused_saying_how_to_fix_it(tools: Tools) -> None:
    result = tools.write(tools.memory_dir / "project_x.md", memory_text("x", "部署" * 5_000))

    assert result.is_error
    assert "header limit" in result.content and "one line under ~150 chars" in result.content
    assert tools.memory_files() == []
