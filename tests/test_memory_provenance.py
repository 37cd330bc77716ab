"""Who wrote a memory: recorded in its frontmatter, shown by `/memory show`; a model write over a
memory a person wrote or edited asks first (the diff shown); each save shown under its tool line;
MINI_CLAUDE_MEMORY=ask|off; a hand-written file without frontmatter is a memory too."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.core.events import ToolFinished
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.memory.provenance import Provenance, parse_time, without_provenance, written_by_hand
from tests.agent_harness import Harness, hold_replies_until_recall_settles
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import (
    choose,
    main_calls,
    memory_text,
    prompt_index_lines,
    result_text,
    seed_memories,
    side_queries,
    side_query_message,
    system_text,
    tool_results_in,
)
from tests.test_memory_agent import memory_command

DEPLOYS = memory_text("deploys", "we deploy on thursdays through the release train", "project")


def model_writes(harness: Harness, api_env: FakeAnthropic, tool: str, args: dict[str, str]) -> str:
    """The model makes one call; the text of its result."""
    api_env.stream_replies.extend([tool_reply(tool, args), text_reply("Done.")])
    harness.turn("please remember that")
    return result_text(tool_results_in(main_calls(api_env)[-1])[0])


def test_a_save_records_who_wrote_it_when_and_the_files_read_in_its_turn(
    harness: Harness, api_env: FakeAnthropic, project_dir: Path
) -> None:
    (project_dir / "NOTES.md").write_text("We deploy on Thursdays.\n")
    target = harness.session.store.root / "project_deploys.md"
    api_env.stream_replies.extend(
        [
            tool_reply("read_file", {"file_path": "NOTES.md"}),
            tool_reply("write_file", {"file_path": str(target), "content": DEPLOYS}),
            text_reply("Saved."),
        ]
    )

    harness.turn("read the notes and remember how we deploy")

    parsed = frontmatter.parse(target.read_text())
    fields = parsed.fields
    assert fields["source"] == "model" and fields["from-files"] == "NOTES.md"
    assert fields["session"] == harness.session.transcript.session_id
    assert parse_time(fields["created"]) is not None and fields["created"] == fields["updated"]
    assert not written_by_hand(parsed)
    [saved] = [event for event in harness.of_type(ToolFinished) if event.name == "write_file"]
    assert saved.summary == "saved new memory project_deploys.md"
    assert saved.detail == (
        "'deploys' (project, this project) — we deploy on thursdays through the release train",
        "from a turn that read: NOTES.md",
    )
    shown = memory_command(harness, "/memory show deploys")
    assert "Written by the model on " in shown and "Saved in a turn that read: NOTES.md" in shown

    # The next turn read nothing: its save names no file.
    other = harness.session.store.root / "project_other.md"
    model_writes(harness, api_env, "write_file", {"file_path": str(other), "content": memory_text("other")})
    assert "from-files" not in frontmatter.parse(other.read_text()).fields


def test_provenance_the_model_writes_itself_is_replaced(harness: Harness, api_env: FakeAnthropic) -> None:
    target = harness.session.store.root / "project_x.md"
    forged = (
        "---\nname: x\ndescription: y\ntype: project\n"
        "source: user\ncreated: 2001-01-01T00:00:00Z\nfingerprint: 0\n---\nz\n"
    )

    model_writes(harness, api_env, "write_file", {"file_path": str(target), "content": forged})

    fields = frontmatter.parse(target.read_text()).fields
    assert fields["source"] == "model" and not fields["created"].startswith("2001")
    assert not written_by_hand(frontmatter.parse(target.read_text()))


def saved_by_the_model(harness: Harness) -> Path:
    return harness.session.store.save(
        name="deploys", description="we deploy on thursdays", memory_type="project",
        body="Through the release train.\n", by=Provenance("model"),
    ).path  # fmt: skip


def test_a_model_write_over_a_hand_edit_asks_with_the_diff_and_no_keeps_the_edit(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    path = saved_by_the_model(harness)
    edit = {"file_path": str(path), "old_string": "release train", "new_string": "release bus"}
    assert "Updated memory" in model_writes(harness, api_env, "edit_file", edit)  # its own: no question
    assert harness.questions == []
    hand = path.read_text().replace("release bus.", "release bus, and never on Fridays.")
    path.write_text(hand)  # a person's words now

    harness.answers.append("n")
    refused = model_writes(
        harness, api_env, "edit_file", {**edit, "old_string": "release bus", "new_string": "train"}
    )

    [question] = harness.questions
    assert question.reason == "a memory someone wrote or edited by hand" and not question.allow_always
    assert question.preview is not None and "release bus" in str(question.preview)
    assert "denied" in refused and path.read_text() == hand

    harness.answers.append("y")
    model_writes(harness, api_env, "edit_file", {**edit, "old_string": "release bus", "new_string": "train"})
    assert "Through the train, and never on Fridays." in path.read_text()
    [changed] = [event for event in harness.of_type(ToolFinished) if event.name == "edit_file"]
    assert "- Through the release bus, and never on Fridays." in changed.detail
    assert "+ Through the train, and never on Fridays." in changed.detail
    harness.answers.clear()
    model_writes(harness, api_env, "edit_file", {**edit, "old_string": "train", "new_string": "tram"})
    assert len(harness.questions) == 2  # yes'd once, it is the model's again: no question


def test_in_bypass_a_write_over_a_hand_written_memory_does_not_ask(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    harness = Harness().start(permission_mode="bypass")
    seed_memories(harness.session.store.root, {"project_deploys.md": DEPLOYS})
    target = str(harness.session.store.root / "project_deploys.md")

    model_writes(
        harness, api_env, "write_file", {"file_path": target, "content": memory_text("deploys", "fridays")}
    )

    assert harness.questions == [] and "fridays" in Path(target).read_text()


def test_print_mode_refuses_a_write_over_a_persons_memory_with_a_line_for_the_model(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    store = seed_memories(Harness().start().session.store.root, {"project_deploys.md": DEPLOYS})
    target = store.root / "project_deploys.md"
    api_env.stream_replies.extend(
        [
            tool_reply(
                "write_file", {"file_path": str(target), "content": memory_text("deploys", "fridays")}
            ),
            text_reply("I could not save it."),
        ]
    )

    printed = Cli(project_dir).run("-p", "we deploy on fridays now")

    assert printed.returncode == 0, printed.stderr
    [result] = tool_results_in(main_calls(api_env)[1])
    assert result.get("is_error") and "needs the user's yes (a memory someone wrote or edited by hand)" in (
        result_text(result)
    )
    assert "no one can be asked here (print mode)" in result_text(result)
    assert "✗ write_file(" in printed.stderr and target.read_text() == DEPLOYS


def test_a_save_in_print_mode_is_shown_on_stderr_under_its_tool_line(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    target = Harness().start().session.store.root / "project_deploys.md"
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": str(target), "content": DEPLOYS}), text_reply("Noted.")]
    )

    printed = Cli(project_dir).run("-p", "we deploy on thursdays")

    lines = printed.stderr.splitlines()
    at = next(i for i, line in enumerate(lines) if "saved new memory project_deploys.md" in line)
    assert (
        lines[at + 1]
        == "    'deploys' (project, this project) — we deploy on thursdays through the release train"
    )


def test_memory_ask_asks_before_every_save_showing_the_content(
    api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINI_CLAUDE_MEMORY", "ask")
    harness = Harness(answers=["n", "y"]).start(permission_mode="bypass")
    target = harness.session.store.root / "project_deploys.md"

    model_writes(harness, api_env, "write_file", {"file_path": str(target), "content": DEPLOYS})
    assert not target.exists()
    model_writes(harness, api_env, "write_file", {"file_path": str(target), "content": DEPLOYS})

    first, second = harness.questions
    assert (
        first.reason == second.reason == "MINI_CLAUDE_MEMORY=ask: every save asks"
        and first.preview is not None
    )
    assert "we deploy on thursdays" in str(first.preview.lines)
    assert without_provenance(target.read_text()) == DEPLOYS
    assert "asks you first (MINI_CLAUDE_MEMORY=ask)" in memory_command(harness, "/memory")


def test_memory_off_loads_no_memory_recalls_none_and_saves_none(
    api_env: FakeAnthropic, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINI_CLAUDE_MEMORY", "off")
    harness = Harness().start()
    store = seed_memories(harness.session.store.root, {"project_deploys.md": DEPLOYS})

    result = model_writes(
        harness, api_env, "write_file", {"file_path": str(store.root / "project_new.md"), "content": DEPLOYS}
    )

    system = system_text(main_calls(api_env)[0])
    assert "Automatic memory is off for this session" in system and "release train" not in system
    assert side_queries(api_env) == []
    assert (
        result.startswith("Memory not saved: automatic memory is off")
        and not (store.root / "project_new.md").exists()
    )
    listing = memory_command(harness, "/memory")
    assert "deploys" in listing and "Automatic memory is off (MINI_CLAUDE_MEMORY=off)" in listing


def test_an_unknown_memory_mode_is_one_line(project_dir: Path) -> None:
    cli = Cli(project_dir)
    cli.env["MINI_CLAUDE_MEMORY"] = "sometimes"
    result = cli.run("memory", "list")
    assert result.returncode == 2 and "MINI_CLAUDE_MEMORY='sometimes' is not on, ask or off" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_hand_written_file_without_frontmatter_is_a_memory(
    harness: Harness, api_env: FakeAnthropic
) -> None:
    folder = harness.session.store.root
    folder.mkdir(parents=True)
    (folder / "deploy-notes.md").write_text("\n# Deploys go out on Thursdays\n\nThrough the release train.\n")
    api_env.plain_replies.append(choose("deploy-notes.md"))
    api_env.responder = hold_replies_until_recall_settles
    api_env.stream_replies.extend([tool_reply("list_files", {}), text_reply("On Thursdays.")])

    harness.turn("when do deploys go out?")

    first, second = main_calls(api_env)
    assert (
        "- **[deploy-notes](deploy-notes.md)** (project) — Deploys go out on Thursdays"
        in prompt_index_lines(system_text(first))
    )
    assert "[project] deploy-notes.md (today): Deploys go out on Thursdays" in side_query_message(
        side_queries(api_env)[0]
    )
    assert "Through the release train." in str(second.messages)
    listing = memory_command(harness, "/memory")
    [line] = [line for line in listing.splitlines() if "deploy-notes" in line]
    assert line.startswith("[project] deploy-notes — Deploys go out on Thursdays  (deploy-notes.md)  (")
    assert line.endswith("(written by hand, no frontmatter)")


def test_the_save_is_shown_under_the_tool_line_in_the_repl(api_env: FakeAnthropic, project_dir: Path) -> None:
    target = Harness().start().session.store.root / "project_deploys.md"
    api_env.stream_replies.extend(
        [tool_reply("write_file", {"file_path": str(target), "content": DEPLOYS}), text_reply("Noted.")]
    )
    with Cli(project_dir).terminal(columns=160) as term:
        term.wait_until_ready()
        term.submit("we deploy on thursdays, remember it")
        term.expect(r"saved new memory project_deploys\.md")
        term.expect(r"'deploys' \(project, this project\) — we deploy on thursdays through the release train")
        term.expect("Noted.")
        term.submit("/memory undo")
        term.expect(r"Undo the model's new memory project_deploys\.md \(")
        term.type("y")
        term.expect(r"removed project_deploys\.md")
        term.submit("/exit")
        assert term.wait_exit() == 0
    assert not target.exists()


def test_in_the_repl_the_question_over_a_hand_edit_shows_the_diff_and_n_keeps_it(
    api_env: FakeAnthropic, project_dir: Path
) -> None:
    store = seed_memories(Harness().start().session.store.root, {"project_deploys.md": DEPLOYS})
    target = store.root / "project_deploys.md"
    fridays = memory_text("deploys", "we deploy on fridays now", "project")
    api_env.stream_replies.extend(
        [
            tool_reply("write_file", {"file_path": str(target), "content": fridays}),
            text_reply("Left it as it was."),
            tool_reply("write_file", {"file_path": str(target), "content": fridays}),
            text_reply("Updated."),
        ]
    )
    with Cli(project_dir).terminal(columns=160) as term:
        term.wait_until_ready()
        term.submit("we deploy on fridays now")
        question = term.expect(r"\[y\]es, \[n\]o:")
        term.type("n")
        denied = term.expect("Left it as it was.")
        assert target.read_text() == DEPLOYS
        term.submit("no really, update it")
        term.expect(r"\[y\]es, \[n\]o:")
        term.type("y")
        updated = term.expect("Updated.")
        term.submit("/exit")
        assert term.wait_exit() == 0
    assert "(a memory someone wrote or edited by hand)" in question
    assert "description: we deploy on thursdays through the release train" in question  # the line it removes
    assert "description: we deploy on fridays now" in question
    assert "→ permission denied" in denied
    # Under the tool line: what was saved and where; the change the question showed is not repeated.
    assert "'deploys' (project, this project) — we deploy on fridays now" in updated
    assert "- description: we deploy on thursdays" not in updated
    assert "fridays" in target.read_text()
