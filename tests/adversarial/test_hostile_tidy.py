"""A hostile side model during `/memory tidy`, and a hostile trash: whatever the answers hold
(paths out of the folder, MEMORY.md, secrets, escape codes, broken or tricky JSON), nothing
outside the memory folder is touched, nothing reaches the terminal raw, and every change left out
is said so; a trash folder that is a symlink is refused, never followed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from mini_claude.core.errors import MemoryStoreError
from mini_claude.memory.store.memory_store import MemoryStore
from mini_claude.memory.tidy.apply import apply_tidy
from mini_claude.memory.tidy.review import TidyReview
from mini_claude.memory.undo import undo_last
from mini_claude.ui.commands.memory.tidy_review import build_proposal, review_and_apply
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import memory_text
from tests.tidy_kit import ScriptedUser, change, changes_answer, create, delete, model, read_answer, seed

ROLE = memory_text("role", "backend engineer", "user", body="Go, not Java.\n")
NOTES = memory_text("notes", "release notes live in docs/", "reference", body="docs/releases.md\n")
FILE_SIZE_LIMIT = 2000  # bytes: the tidy's record and the old memories fit, the rewritten one does not
AWS_KEY = "AKIA" + "Q7RTW2ZKX4LPM3NB"  # the shape of an AWS access key id (not a real one)


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    return project_memory_dir(str(project_dir))


@pytest.fixture
def store(memory_dir: Path) -> MemoryStore:
    return seed(memory_dir, {"user_role.md": ROLE, "reference_notes.md": NOTES})


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the state folder, standing for anything the tidy must never reach."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.md").write_text(ROLE)
    return folder


HOSTILE_CHANGES = {
    "parent path": (delete("../../../outside/victim.md"), "is not the file name of a memory"),
    "absolute path": (change("/etc/passwd", name="x", description="y"), "is not the file name of a memory"),
    "sub folder": (delete(".trash/x.md"), "is not the file name of a memory"),
    "the index": (change("MEMORY.md", name="x", description="y"), "MEMORY.md is generated"),
    "the lock": (delete(".lock"), "is not the file name of a memory"),
    "a memory not read": (delete("user_other.md"), "was not among the memories read"),
    "secret in a change": (
        change("user_role.md", name="role", description="engineer", body=f"aws key {AWS_KEY}\n"),
        "looks like a secret",
    ),
    "secret in a new memory": (
        create(name="deploy key", description="how we deploy", body=f"AWS_ACCESS_KEY_ID={AWS_KEY}\n"),
        "looks like a secret",
    ),
    "escape codes in a memory": (
        change("user_role.md", name="role", description="engineer", body="\x1b[2J\x1b]52;c;aGk=\x07 hi\n"),
        "control characters",
    ),
    "no frontmatter": ({"action": "change", "file": "user_role.md", "content": "just text"}, "frontmatter"),
    "bad type": (create(name="x", description="y", memory_type="root"), "type"),
    "unknown action": ({"action": "chmod", "file": "user_role.md"}, "unknown action"),
    "name taken": (create(name="role", description="another role"), "a memory named 'role' exists"),
}


@case("memory", "each hostile change is left out with a line; no file in or out of the folder changes")
@pytest.mark.parametrize("hostile", list(HOSTILE_CHANGES), ids=list(HOSTILE_CHANGES))
def test_a_hostile_change_is_left_out_and_said_so(
    api_env: FakeAnthropic, store: MemoryStore, memory_dir: Path, outside: Path, hostile: str
) -> None:
    raw, reason = HOSTILE_CHANGES[hostile]
    api_env.plain_replies.append(read_answer("user_role.md"))
    api_env.plain_replies.append(changes_answer(raw))
    before, outside_before = snapshot(memory_dir), snapshot(outside)
    user = ScriptedUser()
    proposal = build_proposal(store, model(api_env), None, "", user.io())
    assert proposal is not None and proposal.changes == []
    assert any(reason in line for line in proposal.dropped), proposal.dropped
    review_and_apply(store, proposal, user.io())  # nothing to ask: no question
    assert snapshot(memory_dir) == before and snapshot(outside) == outside_before
    assert "\x1b" not in user.text and "\x07" not in user.text


BROKEN_ANSWERS = {
    "not json": "I would merge them, yes.",
    "NaN": '{"changes": [{"action": "delete", "file": "user_role.md", "reason": NaN}]}',
    "repeated key": '{"changes": [{"action": "delete", "action": "create", "file": "user_role.md"}]}',
    "changes not a list": '{"changes": {"action": "delete", "file": "user_role.md"}}',
    "deep nesting": '{"changes": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "huge": '{"changes": [' + ", ".join(['{"action": "delete"}'] * 30_000) + "]}",
    "wrong types": '{"changes": [{"action": "delete", "file": ["user_role.md"]}]}',
}


@case("memory", "a malformed answer proposes nothing for its batch and says why; nothing changes")
@pytest.mark.parametrize("answer", list(BROKEN_ANSWERS), ids=list(BROKEN_ANSWERS))
def test_a_malformed_answer_proposes_nothing(
    api_env: FakeAnthropic, store: MemoryStore, memory_dir: Path, answer: str
) -> None:
    api_env.plain_replies.append(read_answer("user_role.md"))
    api_env.plain_replies.append(text_reply(BROKEN_ANSWERS[answer]))
    before = snapshot(memory_dir)
    proposal = TidyReview(store, model(api_env)).propose()
    assert proposal.changes == [] and proposal.dropped
    assert snapshot(memory_dir) == before


@case("memory", "two changes to one file: the first is kept, the second left out")
def test_a_second_change_to_the_same_file_is_left_out(api_env: FakeAnthropic, store: MemoryStore) -> None:
    api_env.plain_replies.append(read_answer("user_role.md", "user_role.md"))
    api_env.plain_replies.append(
        changes_answer(
            change("user_role.md", name="role", description="backend engineer, Go"), delete("user_role.md")
        )
    )
    proposal = TidyReview(store, model(api_env)).propose()
    assert [(c.action, c.file_name) for c in proposal.changes] == [("change", "user_role.md")]
    assert any("a second change to user_role.md" in line for line in proposal.dropped)


@case("terminal", "escape codes in reasons, names and diffs reach the terminal written out")
def test_escape_codes_in_a_proposal_reach_no_terminal(api_env: FakeAnthropic, store: MemoryStore) -> None:
    api_env.plain_replies.append(read_answer("user_role.md"))
    api_env.plain_replies.append(
        changes_answer(
            {
                **change("user_role.md", name="role", description="engineer"),
                "reason": "ok\x1b[2J\x1b]0;pwned\x07\r",
            },
            {"action": "delete", "file": "user_\x1b[31mrole.md", "reason": "\x9b31m"},
        )
    )
    user = ScriptedUser([False])
    proposal = build_proposal(store, model(api_env), None, "", user.io())
    assert proposal is not None
    review_and_apply(store, proposal, user.io())
    assert not any(ch in user.text for ch in "\x1b\x07\x9b\r")
    assert "$'user_\\x1b[31mrole.md' was not among the memories read" in user.text  # quoted as bash would


@case("paths", "a .trash that is a symlink out of the folder: the tidy is refused, nothing moves")
def test_a_symlinked_trash_is_refused(
    api_env: FakeAnthropic, store: MemoryStore, memory_dir: Path, outside: Path
) -> None:
    api_env.plain_replies.append(read_answer("user_role.md"))
    api_env.plain_replies.append(changes_answer(delete("user_role.md")))
    proposal = TidyReview(store, model(api_env)).propose()
    (memory_dir / ".trash").symlink_to(outside)
    before, outside_before = snapshot(memory_dir), snapshot(outside)
    with pytest.raises(MemoryStoreError, match=r"\.trash is a symlink"):
        apply_tidy(store, proposal.changes)
    assert snapshot(memory_dir) == before and snapshot(outside) == outside_before


@case("paths", "a tidy record naming a path outside the folder: undo refuses it whole")
def test_a_tampered_tidy_record_is_refused(
    api_env: FakeAnthropic, store: MemoryStore, memory_dir: Path, outside: Path
) -> None:
    api_env.plain_replies.append(read_answer("user_role.md"))
    api_env.plain_replies.append(changes_answer(delete("user_role.md")))
    apply_tidy(store, TidyReview(store, model(api_env)).propose().changes)
    [folder] = (memory_dir / ".trash").iterdir()
    record = json.loads((folder / "changes.json").read_text())
    record["entries"][0]["file"] = "../../../outside/victim.md"
    (folder / "changes.json").write_text(json.dumps(record))
    outside_before = snapshot(outside)
    with pytest.raises(MemoryStoreError, match="names no memory file"):
        undo_last(store)
    assert snapshot(outside) == outside_before and not (memory_dir / "user_role.md").exists()


@case("paths", "a file in the trash swapped for a symlink: undo does not follow it")
def test_a_trash_copy_swapped_for_a_symlink_is_not_restored(
    api_env: FakeAnthropic, store: MemoryStore, memory_dir: Path, outside: Path
) -> None:
    api_env.plain_replies.append(read_answer("user_role.md"))
    api_env.plain_replies.append(
        changes_answer(change("user_role.md", name="role", description="Go engineer"))
    )
    apply_tidy(store, TidyReview(store, model(api_env)).propose().changes)
    [folder] = (memory_dir / ".trash").iterdir()
    kept = folder / "before" / "user_role.md"
    kept.unlink()
    kept.symlink_to(outside / "victim.md")
    (outside / "victim.md").write_text(memory_text("role", "planted", "user", body="planted text\n"))
    reverted = undo_last(store)
    assert reverted.restored == [] and any("could not be put back" in line for line in reverted.left)
    assert "planted" not in (memory_dir / "user_role.md").read_text()


@case("crashes", "a write fails part-way (file size limit): what was done is put back, every file as it was")
def test_a_failure_part_way_puts_back_what_was_done(
    api_env: FakeAnthropic, store: MemoryStore, memory_dir: Path, project_dir: Path
) -> None:
    big_body = "Release notes: docs/releases.md.\n" * 100  # ~3.3 KB: within a memory, over the limit
    api_env.plain_replies.append(read_answer("user_role.md", "reference_notes.md"))
    api_env.plain_replies.append(
        changes_answer(
            delete("user_role.md"),
            change("reference_notes.md", name="notes", description="release notes", body=big_body),
        )
    )
    before = snapshot(memory_dir)

    result = Cli(project_dir).run("memory", "tidy", "--yes", file_size_limit=FILE_SIZE_LIMIT)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "the tidy was not applied (" in result.stdout and "every memory file is as it was" in result.stdout
    after = snapshot(memory_dir)
    assert {k: v for k, v in after.items() if not k.startswith(".")} == {
        k: v for k, v in before.items() if not k.startswith(".")
    }
