"""`mini-claude memory search` and `/memory search`: the memories matching some words, best first,
ranked as recall ranks them, with scope and a snippet; errors are one line."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir, user_memory_dir
from mini_claude.memory.recall.ranking import RecallRanking
from mini_claude.memory.recall.ranking_index import INDEX_FILE
from mini_claude.memory.recall.search import search_memories
from mini_claude.memory.scopes import MemoryScopes
from mini_claude.memory.store.memory_folder import GITIGNORE_TEXT
from mini_claude.memory.store.memory_store import MemoryStore
from tests.cli_harness import Cli
from tests.test_memory_scopes import git

DAY = 86_400


def memory_file(name: str, description: str, body: str, memory_type: str = "project") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {memory_type}\n---\n{body}"


def write(folder: Path, file_name: str, text: str, days: float) -> None:
    path = folder / file_name
    path.write_text(text, encoding="utf-8")
    when = time.time() - days * DAY
    os.utime(path, (when, when))


@pytest.fixture
def cli(project_dir: Path) -> Cli:
    return Cli(project_dir)  # no ANTHROPIC_* settings: search needs no model


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    folder = project_memory_dir(str(project_dir))
    folder.mkdir(parents=True)
    body = "Hotfixes need sign-off from Dana.\nThe train is cut on Wednesday at 18:00 UTC.\n"
    write(folder, "project_payments.md", memory_file(
        "payments release train", "the payments service ships only with the Thursday release train", body,
    ), days=30)  # fmt: skip
    write(folder, "feedback_db.md", memory_file(
        "never mock the database", "integration tests must hit a real Postgres",
        "Use the db fixture in tests/integration.\n", "feedback"), days=10)  # fmt: skip
    write(folder, "project_flaky.md", memory_file(
        "flaky checkout test", "test_checkout_timeout fails in 5% of runs",
        "Rerun once before investigating: the payment sandbox is slow at night.\n"), days=3)  # fmt: skip
    write(
        folder,
        "reference_broken.md",
        "---\nname: payments train\ntype: project\n---\nno description\n",
        days=1,
    )
    return folder


def test_search_lists_matches_best_first_with_scope_and_snippet(cli: Cli, memory_dir: Path) -> None:
    result = cli.run("memory", "search", "when", "is", "the", "payments", "train", "cut?")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith(
        "  project  [project] payments release train — the payments service ships only with the "
        "Thursday release train  (project_payments.md)"
    )
    assert lines[1].strip() == "The train is cut on Wednesday at 18:00 UTC."  # the line that matches best
    assert "(project_flaky.md)" in lines[2]  # "payment" matches too, less well
    assert not any("feedback_db.md" in line or "reference_broken.md" in line for line in lines)
    first, second = float(lines[0].split()[0]), float(lines[2].split()[0])
    assert first > second >= 0  # ("payments" is in two of the three memories: BM25 gives it no weight)


def test_json_is_a_list_of_objects_with_file_name_scope_and_score(cli: Cli, memory_dir: Path) -> None:
    result = cli.run("memory", "search", "--json", "payments", "database", "tests")

    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert {hit["file"] for hit in found} == {"project_payments.md", "feedback_db.md", "project_flaky.md"}
    assert all(hit["scope"] == "project" for hit in found)
    scores = [hit["score"] for hit in found]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0
    assert found[0]["file"] == "feedback_db.md"  # "database": the one word only one memory holds
    db = next(hit for hit in found if hit["file"] == "feedback_db.md")
    assert db["name"] == "never mock the database" and db["type"] == "feedback"
    assert db["path"] == str(memory_dir / "feedback_db.md")


def test_limit_bounds_the_list(cli: Cli, memory_dir: Path) -> None:
    one = cli.run("memory", "search", "payments", "--limit", "1", "--json")
    huge = cli.run("memory", "search", "payments", "--limit", "9" * 30, "--json")

    assert one.returncode == huge.returncode == 0, one.stderr + huge.stderr
    assert [hit["file"] for hit in json.loads(one.stdout)] == ["project_payments.md"]
    assert len(json.loads(huge.stdout)) == 2


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ((), "give the words to search for"),
        (("  ",), "give the words to search for"),
        (("how", "the"), "has no word to search for"),
        (("payments", "--limit", "x"), "--limit takes a whole number of at least 1, not 'x'"),
        (("payments", "--limit", "0"), "--limit takes a whole number of at least 1, not '0'"),
        (("payments", "--limit=-3"), "--limit takes a whole number of at least 1, not '-3'"),
    ],
    ids=["no query", "blank", "stopwords only", "limit not a number", "limit zero", "limit negative"],
)
def test_a_wrong_query_or_limit_is_one_line(
    cli: Cli, memory_dir: Path, words: tuple[str, ...], expected: str
) -> None:
    result = cli.run("memory", "search", *words)

    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and expected in result.stderr


def test_no_memories_is_one_line_naming_where_it_looked(cli: Cli, project_dir: Path) -> None:
    result = cli.run("memory", "search", "payments")

    folder, yours = project_memory_dir(str(project_dir)), user_memory_dir()
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        f"mini-claude: no memories to search for {project_dir} (looked in {folder}, {yours})\n"
    )
    assert not folder.exists() and not yours.exists()  # searching creates no memory folder


def test_nothing_matching_says_so_and_json_is_an_empty_list(cli: Cli, memory_dir: Path) -> None:
    text, as_json = cli.run("memory", "search", "zebra"), cli.run("memory", "search", "zebra", "--json")

    assert text.returncode == as_json.returncode == 0
    assert text.stdout == "No memory matches 'zebra'.\n"
    assert json.loads(as_json.stdout) == []


def test_text_from_the_files_cannot_reach_the_terminal_as_control_sequences(
    cli: Cli, memory_dir: Path
) -> None:
    write(memory_dir, "project_evil.md", memory_file(
        "evil \x1b[2J payments", "payments \x1b]52;c;cGF5bG9hZA==\x07 clipboard",
        "payments \x9b31m red \u202e reversed\n"), days=0)  # fmt: skip

    text = cli.run("memory", "search", "payments", "--limit", "10")
    as_json = cli.run("memory", "search", "payments", "--json")

    assert "project_evil.md" in text.stdout
    for raw in ("\x1b", "\x9b", "\x07", "\u202e"):
        assert raw not in text.stdout and raw not in as_json.stdout
    evil = next(hit for hit in json.loads(as_json.stdout) if hit["file"] == "project_evil.md")
    assert evil["name"] == "evil \x1b[2J payments"  # the real text, escaped in the JSON


def test_search_order_is_the_order_recall_offers(memory_dir: Path) -> None:
    store = MemoryStore(memory_dir)
    query = "payments release tests database"

    hits = search_memories(store, query, 10)
    offered = RecallRanking(store).candidates(query, len(hits))

    assert [hit.memory.file_name for hit in hits] == [memory.file_name for memory in offered]


def test_several_folders_merge_by_score_each_hit_keeping_its_scope(memory_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "user-memory"
    other.mkdir()
    on_call = memory_file("payments on-call", "I am on call for payments releases", "Page me.\n", "user")
    write(other, "user_payments.md", on_call, days=2)
    scopes = MemoryScopes(MemoryStore(memory_dir, "project"), user=MemoryStore(other, "user"))

    hits = search_memories(scopes, "payments release train", 10)

    scope_of = {hit.memory.file_name: hit.memory.scope for hit in hits}
    assert scope_of["project_payments.md"] == "project" and scope_of["user_payments.md"] == "user"
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_yours_are_searched_in_every_project_and_named_by_their_key(cli: Cli, memory_dir: Path) -> None:
    yours = user_memory_dir()
    yours.mkdir(parents=True)
    on_call = memory_file(
        "payments on-call", "I am on call for payments releases", "Page me first.\n", "user"
    )
    write(yours, "user_payments.md", on_call, days=2)

    text = cli.run("memory", "search", "payments", "on-call")
    as_json = cli.run("memory", "search", "payments", "on-call", "--json")

    assert text.returncode == as_json.returncode == 0, text.stderr + as_json.stderr
    first = text.stdout.splitlines()[0]
    assert first.endswith(
        "  user  [user] payments on-call — I am on call for payments releases  (user/user_payments.md)"
    )
    hits = json.loads(as_json.stdout)
    assert hits[0] | {"score": 0} == hits[0] | {
        "file": "user_payments.md", "name": "payments on-call", "scope": "user", "score": 0,
        "path": str(yours / "user_payments.md"),
    }  # fmt: skip
    assert {hit["scope"] for hit in hits} == {"user", "project"}
    assert cli.run("memory", "show", "user/user_payments.md").stdout == on_call  # the key shown finds it


def test_the_narrower_scope_wins_and_an_expired_memory_is_not_found(cli: Cli, memory_dir: Path) -> None:
    yours = user_memory_dir()
    yours.mkdir(parents=True)
    # The project's memory of this name hides it, in recall and in search.
    mine = memory_file("payments release train", "payments release train, mine", "Train.\n", "user")
    write(yours, "user_train.md", mine, days=0)
    train = memory_file("old payments train", "payments release train on Mondays", "Mondays.\n")
    write(memory_dir, "project_old_train.md", train.replace("---\n", "---\nexpires: 2020-01-31\n", 1), days=0)
    train = memory_file("next payments train", "payments release train on Fridays", "Fridays.\n")
    write(memory_dir, "project_new_train.md", train.replace("---\n", "---\nexpires: 2999-01-31\n", 1), days=0)

    every = cli.run("memory", "search", "payments", "release", "train", "--json")
    two = cli.run("memory", "search", "payments", "release", "train", "--json", "--limit", "2")

    found = [hit["file"] for hit in json.loads(every.stdout)]
    assert "user_train.md" not in found and "project_old_train.md" not in found
    assert {"project_payments.md", "project_new_train.md"} <= set(found)
    assert [hit["file"] for hit in json.loads(two.stdout)] == found[:2]  # no gap where they were left out


def test_the_teams_are_searched_only_in_a_trusted_folder(project_dir: Path) -> None:
    git(project_dir, "init", "-q")
    team = project_dir / ".mini-claude" / "memory"
    team.mkdir(parents=True)
    write(
        team, "project_deploys.md", memory_file("deploys", "we ship payments on thursdays", "Ask Dana.\n"), 1
    )
    (team / ".gitignore").write_text(GITIGNORE_TEXT)
    cli = Cli(project_dir)

    untrusted = cli.run("memory", "search", "payments", "--json")
    trusted = cli.run("--trust-folder", "memory", "search", "payments", "--json")

    assert untrusted.returncode == 1 and untrusted.stdout == ""
    assert "1 team memories in the repository are not loaded: this folder is not trusted" in untrusted.stderr
    assert [(hit["file"], hit["scope"]) for hit in json.loads(trusted.stdout)] == [
        ("project_deploys.md", "team")
    ]
    assert (team / INDEX_FILE).exists()  # the team's folder has its own index, which git ignores
    assert git(project_dir, "ls-files", "--others", "--exclude-standard").split() == [
        ".mini-claude/memory/.gitignore", ".mini-claude/memory/project_deploys.md",
    ]  # fmt: skip


def test_repl_memory_search(cli: Cli, memory_dir: Path) -> None:
    user_memory_dir().mkdir(parents=True)
    on_call = memory_file("payments on-call", "I am on call for the train", "Page me first.\n", "user")
    write(user_memory_dir(), "user_payments.md", on_call, days=2)
    with cli.terminal(columns=200) as term:
        term.wait_until_ready()
        term.submit("/memory search payments train")
        term.submit("/memory search")
        shown = term.expect(r"/memory search needs words: /memory search QUERY\.")
        assert "project  [project] payments release train" in shown
        assert "The train is cut on Wednesday at 18:00 UTC." in shown
        assert "user  [user] payments on-call — I am on call for the train  (user/user_payments.md)" in shown
        term.submit("/memory search zebra")
        term.expect(r"No memory matches 'zebra'\.")
