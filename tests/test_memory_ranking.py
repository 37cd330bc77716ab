"""Recall ranking: which memories a recall offers the side model, chosen by relevance from an index
derived from the files, against real memory directories (hostile indexes: tests/adversarial)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mini_claude.memory.recall import ranking_sync
from mini_claude.memory.recall.ranking import RecallRanking
from mini_claude.memory.recall.ranking_index import INDEX_FILE
from mini_claude.memory.recall.terms import (
    MAX_QUERY_TERMS,
    MAX_TERMS_WEIGHED,
    query_parts,
    terms,
)
from mini_claude.memory.store.memory_store import MemoryStore

DAY = 86_400
LIMIT = 200
# A worker's traceback and log lines: far more than MAX_QUERY_TERMS distinct terms, many of them
# words the distractors below hold.
LOG = "\n".join(
    f"2026-11-30T12:{i:02}:01Z ERROR worker-{i} kafka consumer orders-v{i} lag partition={i} offset={i}77 "
    f"circuit breaker upstream inventory{i} latency retries queue{i} handler{i} processor{i} decode{i}"
    for i in range(12)
)
QUESTION = "can I push this payments fix out today?"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "memory")


def write(
    store: MemoryStore, file_name: str, name: str, description: str, body: str = "x\n", days: float = 0
):
    """A memory file written by hand, last changed `days` ago."""
    store.root.mkdir(parents=True, exist_ok=True)
    path = store.root / file_name
    path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n{body}")
    when = time.time() - days * DAY
    os.utime(path, (when, when))
    return path


def fill(store: MemoryStore, count: int, *, days: float = 0) -> list[str]:
    """`count` newer memories about other things that share common words ("tests", "service")."""
    topics = (
        "billing tests",
        "search service",
        "frontend build",
        "worker retries",
        "api docs",
        "auth tokens",
    )
    names = []
    for i in range(count):
        topic = topics[i % len(topics)]
        file_name = f"project_filler_{i:03}.md"
        write(
            store,
            file_name,
            f"{topic} {i}",
            f"notes on the {topic} and the service tests",
            days=days + i / 1000,
        )
        names.append(file_name)
    return names


def offered(store: MemoryStore, query: str, ranking: RecallRanking | None = None) -> list[str]:
    return [m.file_name for m in (ranking or RecallRanking(store)).candidates(query, LIMIT)]


# --- relevance ---------------------------------------------------------------------------------


def test_an_old_relevant_memory_is_offered_first_among_hundreds_of_newer_ones(store: MemoryStore) -> None:
    fill(store, 400)
    write(
        store, "project_payments_train.md", "payments release train",
        "the payments service ships only with the Thursday release train", days=400,
    )  # fmt: skip

    chosen = offered(store, "can I push this payments fix out today?")

    assert len(chosen) == LIMIT
    assert chosen[0] == "project_payments_train.md"


def test_a_term_found_only_in_the_body_still_counts(store: MemoryStore) -> None:
    fill(store, 300)
    write(store, "project_flaky.md", "flaky e2e test", "one end-to-end test fails now and then",
          body="test_checkout_timeout in tests/e2e fails in 5% of runs.\n", days=200)  # fmt: skip

    assert offered(store, "test_checkout_timeout failed again, is it my change?")[0] == "project_flaky.md"


@pytest.mark.parametrize(
    ("name", "description", "query"),
    [
        ("数据库迁移冻结", "本周五之前不要合并任何数据库迁移脚本", "我能合并这个迁移脚本吗？"),
        ("リリース凍結期間", "年末年始は本番リリース禁止", "年末に本番へリリースしても大丈夫？"),
        ("배포 승인 절차", "운영 배포는 금요일 오후에 금지", "금요일에 운영 배포해도 되나요?"),
    ],
    ids=["chinese", "japanese", "korean"],
)
def test_a_cjk_message_finds_its_cjk_memory(
    store: MemoryStore, name: str, description: str, query: str
) -> None:
    fill(store, 300)
    for i, other in enumerate(("测试环境地址", "設計ドキュメントの場所", "예산 관리 시트", "日志配置")):
        write(store, f"project_cjk_other_{i}.md", other, f"{other}的说明", days=i)
    write(store, "project_target.md", name, description, days=300)

    assert offered(store, query)[0] == "project_target.md"


def test_among_equally_relevant_memories_the_newer_comes_first(store: MemoryStore) -> None:
    fill(store, 50)
    for file_name, days in (("project_a.md", 90), ("project_b.md", 3), ("project_c.md", 30)):
        write(store, file_name, "kafka retention", "event topics keep seven days", days=days)

    assert offered(store, "how long does kafka keep events?")[:3] == [
        "project_b.md",
        "project_c.md",
        "project_a.md",
    ]


def test_recency_is_only_a_mild_preference(store: MemoryStore) -> None:
    write(store, "project_new.md", "kafka consumers", "how our consumers commit offsets", days=0)
    write(store, "project_old.md", "kafka retention", "kafka topics keep events seven days", days=365)

    assert offered(store, "how long does kafka keep events?")[:2] == ["project_old.md", "project_new.md"]


@pytest.fixture(scope="module")
def filled_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[MemoryStore, list[str]]:
    """250 memories and their saved index, shared by tests that only ask: each asks through a new
    ranking, as the next session would, instead of writing and indexing the 250 again."""
    store = MemoryStore(tmp_path_factory.mktemp("filled") / "memory")
    names = fill(store, 250)
    RecallRanking(store).candidates("", LIMIT)
    assert (store.root / INDEX_FILE).is_file()
    return store, names


@pytest.mark.parametrize(
    "query",
    ["", "   ", "the and of it", "???", "x y z"],
    ids=["empty", "blank", "stopwords", "punctuation", "letters"],
)
def test_a_message_without_search_terms_offers_the_newest(
    filled_store: tuple[MemoryStore, list[str]], query: str
) -> None:
    store, names = filled_store  # names[i] is newer than names[i + 1]

    assert offered(store, query) == names[:LIMIT]


def test_fewer_matches_than_the_manifest_holds_are_topped_up_with_the_newest(store: MemoryStore) -> None:
    names = fill(store, 250)
    write(store, "project_old.md", "kafka retention", "kafka topics keep events seven days", days=500)

    chosen = offered(store, "kafka?")

    assert chosen == ["project_old.md", *names[: LIMIT - 1]]


def test_memories_already_recalled_are_left_out(store: MemoryStore) -> None:
    names = fill(store, 10)
    ranking = RecallRanking(store)

    chosen = ranking.candidates("billing tests", LIMIT, exclude={names[0], names[6]})

    assert {m.file_name for m in chosen} == set(names) - {names[0], names[6]}


def test_broken_files_and_unprintable_names_are_never_offered(store: MemoryStore) -> None:
    fill(store, 5)
    (store.root / "project_no_header.md").write_text("---\nkafka retention: topics keep seven days\n")
    (store.root / "project_bad_type.md").write_text("---\nname: kafka\ndescription: kafka\ntype: nope\n---\n")
    write(store, "project_line\nbreak.md", "kafka retention", "kafka topics keep seven days")
    with open(os.path.join(os.fsencode(store.root), b"project_\xe9.md"), "wb") as handle:
        handle.write(b"---\nname: kafka\ndescription: kafka retention\ntype: project\n---\n")

    chosen = offered(store, "kafka retention")

    assert len(chosen) == 5 and all(name.startswith("project_filler_") for name in chosen)


# --- the files stay the truth ------------------------------------------------------------------


def test_a_hand_edit_is_seen_by_the_next_recall(store: MemoryStore) -> None:
    fill(store, 300)
    path = write(store, "project_notes.md", "notes", "loose notes", days=300)
    ranking = RecallRanking(store)
    assert "project_notes.md" not in offered(store, "kafka retention", ranking)

    write(store, "project_notes.md", "kafka retention", "topics keep seven days", days=300)  # same mtime
    os.utime(path, ns=(path.stat().st_mtime_ns + 1, path.stat().st_mtime_ns + 1))

    assert offered(store, "kafka retention", ranking)[0] == "project_notes.md"


def test_a_deleted_memory_is_gone_from_the_next_recall(store: MemoryStore) -> None:
    fill(store, 30)
    path = write(store, "project_kafka.md", "kafka retention", "kafka topics keep seven days", days=100)
    ranking = RecallRanking(store)
    assert offered(store, "kafka", ranking)[0] == "project_kafka.md"

    path.unlink()

    assert "project_kafka.md" not in offered(store, "kafka", ranking)
    with sqlite3.connect(store.root / INDEX_FILE) as saved:
        assert saved.execute(
            "SELECT count(*) FROM files WHERE file_name = 'project_kafka.md'"
        ).fetchone() == (0,)


def test_another_sessions_save_is_seen_by_the_next_recall(store: MemoryStore) -> None:
    fill(store, 300)
    ranking = RecallRanking(store)
    assert offered(store, "kafka retention", ranking)[0].startswith("project_filler_")

    saver = (
        "import sys; from pathlib import Path; from mini_claude.memory.store.memory_store import MemoryStore;"
        "MemoryStore(Path(sys.argv[1])).save(name='kafka retention', description='topics keep seven days',"
        " memory_type='project', body='Replay older events from the archive.\\n')"
    )
    subprocess.run([sys.executable, "-c", saver, str(store.root)], check=True, timeout=60)

    assert offered(store, "kafka retention", ranking)[0] == "project_kafka_retention.md"


def test_the_next_session_starts_from_the_saved_index(store: MemoryStore) -> None:
    fill(store, 100)
    write(store, "project_kafka.md", "kafka retention", "kafka topics keep seven days", days=100)
    RecallRanking(store).candidates("kafka", LIMIT)
    saved = (store.root / INDEX_FILE).stat()

    chosen = offered(store, "kafka")  # a new ranking: as in the next session

    assert chosen[0] == "project_kafka.md"
    assert (store.root / INDEX_FILE).stat().st_mtime_ns == saved.st_mtime_ns  # nothing to update
    assert (store.root / INDEX_FILE).stat().st_mode & 0o777 == 0o600


def test_no_memory_directory_means_nothing_offered_and_nothing_created(store: MemoryStore) -> None:
    assert offered(store, "kafka retention") == []
    assert not store.root.exists()


# --- search terms ------------------------------------------------------------------------------


def test_terms_split_words_and_pair_cjk_characters() -> None:
    assert terms("The DB-Migration of 数据库 for the Café, テスト 배포를") == [
        "db", "migration", "数据", "据库", "cafe", "テス", "スト", "배포", "포를",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "query",
    ['"deploy', 'deploy" OR "x', "deploy*", "NEAR(deploy tests)", "-deploy", "name:deploy", "{name}: deploy",
     "deploy\x00tests", "^deploy", "deploy AND NOT tests", "(((deploy", "deploy + tests",
     LOG + '"deploy* NEAR(x'],
)  # fmt: skip
def test_query_syntax_in_a_message_is_only_words(store: MemoryStore, query: str) -> None:
    """Quotes, operators, column filters and NUL reach the index as words, never as its syntax."""
    write(store, "project_deploy.md", "deploy checklist", "how we deploy the api", days=30)
    write(store, "project_lunch.md", "lunch menu", "sandwiches for the team", days=1)

    assert offered(store, query)[0] == "project_deploy.md"


def test_a_huge_paste_is_weighed_by_a_bounded_number_of_terms() -> None:
    parts = query_parts(" ".join(f"word{i}" for i in range(5000)) + "\nhow do we deploy?")

    assert parts and all(len(part) <= MAX_TERMS_WEIGHED for part in parts)
    assert "deploy" in parts[0]  # the question's line, first


# --- long messages: a log or code pasted with the question ----------------------------------------


@pytest.fixture
def busy_store(store: MemoryStore) -> MemoryStore:
    """The memory the question needs, the oldest, among newer ones full of the log's words."""
    write(store, "project_payments_train.md", "payments release train",
          "the payments service ships only with the Thursday release train", days=300)  # fmt: skip
    for i in range(40):
        about = f"worker {i} kafka consumer lag, circuit breaker and retries on the inventory queue"
        write(store, f"project_log_{i:02}.md", f"kafka consumer lag {i}", about, days=i)
    return store


@pytest.mark.parametrize(
    "message",
    [LOG + "\n" + QUESTION, QUESTION + "\n\n" + LOG, LOG + "\n" + QUESTION + "\n" + LOG],
    ids=["pasted before", "pasted after", "in the middle"],
)
def test_a_question_with_a_pasted_log_still_finds_its_memory(busy_store: MemoryStore, message: str) -> None:
    assert len(set(terms(LOG))) > MAX_QUERY_TERMS

    top = [m.file_name for m in RecallRanking(busy_store).candidates(message, 8)]

    assert "project_payments_train.md" in top
    assert any(name.startswith("project_log_") for name in top)  # the log's own memories too


def test_a_cjk_question_after_a_pasted_log_finds_its_memory(busy_store: MemoryStore) -> None:
    write(busy_store, "project_deploy_cn.md", "部署流程", "部署流程和发布时间", days=200)

    top = [m.file_name for m in RecallRanking(busy_store).candidates(LOG + "\n部署流程是什么？", 8)]

    assert "project_deploy_cn.md" in top


def test_a_long_message_keeps_its_rare_terms_wherever_they_are(store: MemoryStore) -> None:
    write(store, "project_vault.md", "secrets live in vault", "where credentials are kept", days=300)
    fill(store, 30)
    # One line of 300 distinct words: only the 200th is a word any memory holds.
    words = [f"w{i}x" for i in range(300)]
    words[200] = "vault"

    top = [m.file_name for m in RecallRanking(store).candidates(" ".join(words), 5)]

    assert top[0] == "project_vault.md"


# --- memories of the same day, and word forms ----------------------------------------------------


def test_a_memory_that_says_little_is_found_through_the_day_the_message_is_about(
    store: MemoryStore,
) -> None:
    """Two memories match "reaction" alike; the one saved the day the endorsement deal was
    recorded comes first, because that day's memories together are about the message."""
    fill(store, 60, days=5)
    write(store, "project_deal.md", "endorsement deal", "signed the beverage company endorsement deal",
          body="The contract covers two seasons.\n", days=40.2)  # fmt: skip
    write(store, "project_reaction.md", "team reaction", "the reaction was great, it felt crazy", days=40.1)
    write(store, "project_other.md", "press reaction", "the reaction was mixed, it felt odd", days=2)

    chosen = offered(store, "what was the reaction to sealing the endorsement deal with the beverage firm?")

    assert chosen[:3] == ["project_deal.md", "project_reaction.md", "project_other.md"]


def test_a_day_never_brings_in_a_memory_that_matches_no_word(store: MemoryStore) -> None:
    write(store, "project_deal.md", "endorsement deal", "signed the beverage endorsement deal", days=40)
    write(store, "project_lunch.md", "lunch order", "sandwiches for the team", days=40.01)  # 14 min before
    write(store, "project_other.md", "old contract", "a beverage supplier contract", days=300)

    found = [memory.file_name for memory, _ in RecallRanking(store).search("beverage endorsement", 10)]

    assert found == ["project_deal.md", "project_other.md"]


def test_a_memory_saved_a_minute_after_a_strong_match_is_found_through_it(store: MemoryStore) -> None:
    """The follow-up shares no word with the message, but was saved right after the memory that
    does: it is ranked, above memories that share a common word only."""
    fill(store, 30, days=5)
    write(
        store, "project_accident.md", "the accident", "asked how the kids handled the car accident", days=40
    )
    write(
        store,
        "project_after.md",
        "follow-up",
        "they were scared, but we reassured them",
        days=40 - 60 / 86_400,
    )
    write(store, "project_alone.md", "reassurance", "we reassured the client", days=40 - 3600 / 86_400)

    found = [
        m.file_name for m, _ in RecallRanking(store).search("how did the children handle the accident?", 10)
    ]

    assert found[:2] == ["project_accident.md", "project_after.md"]
    assert "project_alone.md" not in found


def test_memories_saved_in_one_burst_are_not_each_others_moment(store: MemoryStore) -> None:
    """A checkout or a copy gives dozens of memories the same time: that says nothing about them."""
    write(
        store, "project_accident.md", "the accident", "asked how the kids handled the car accident", days=40
    )
    for i in range(12):
        write(store, f"project_copied_{i}.md", f"copied {i}", "notes on other things", days=40)

    found = [
        m.file_name for m, _ in RecallRanking(store).search("how did the children handle the accident?", 10)
    ]

    assert found == ["project_accident.md"]


def test_irregular_word_forms_meet_their_base_form(store: MemoryStore) -> None:
    fill(store, 30)
    write(store, "project_db.md", "database choice", "we went with Postgres for the ledger", days=100)
    write(store, "project_kids.md", "family", "the children bought a puppy", days=200)

    assert terms("we went and bought the children toys") == ["go", "buy", "child", "toys"]
    assert offered(store, "why do we go with this database?")[0] == "project_db.md"
    assert offered(store, "what did the child buy?")[0] == "project_kids.md"


def test_a_word_nearly_every_memory_of_a_big_folder_holds_is_left_out(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It says nothing about which memory is meant (and costs the most to weigh): the search goes
    by the words that do. Ten memories stand for a folder of thousands here."""
    monkeypatch.setattr(ranking_sync, "COMMON_MIN_HOLDERS", 5)
    for i in range(9):
        write(store, f"project_deploy_{i}.md", f"deploy note {i}", f"how we deploy service {i}", days=i + 1)
    write(store, "project_rollback.md", "rollback", "deploy rollback steps", days=30)

    found = [m.file_name for m, _ in RecallRanking(store).search("deploy rollback", 20)]

    assert found == ["project_rollback.md"]


def test_everyday_synonyms_meet(store: MemoryStore) -> None:
    fill(store, 30)
    write(store, "project_pics.md", "trip", "the kids took pics at the lake", days=100)

    assert terms("my kid's fave pics") == ["child", "favorite", "photo"]
    assert offered(store, "which photographs did the children take?")[0] == "project_pics.md"


def test_search_scores_are_best_first_and_a_changed_day_is_seen_at_once(store: MemoryStore) -> None:
    write(store, "project_a.md", "kafka retention", "kafka topics keep events seven days", days=10)
    write(store, "project_b.md", "kafka consumers", "consumers commit offsets", days=20)
    ranking = RecallRanking(store)

    first = ranking.search("how long does kafka keep events?", 10)
    assert [m.file_name for m, _ in first] == ["project_a.md", "project_b.md"]
    assert first[0][1] > first[1][1] > 0

    # b moves to a's day (a hand edit's new mtime): its day now holds what the message is about,
    # which counts far more than the few days' recency it gains.
    when = (store.root / "project_a.md").stat().st_mtime
    os.utime(store.root / "project_b.md", (when, when))
    again = {m.file_name: score for m, score in ranking.search("how long does kafka keep events?", 10)}
    assert again["project_b.md"] > 1.5 * first[1][1]


# --- how specific a memory's words are ---------------------------------------------------------


def test_of_two_memories_matching_alike_the_one_of_rarer_words_comes_first(store: MemoryStore) -> None:
    """Both say "rollback" as often, in as many words; the newer one's other words are those every
    note of the folder holds, the older one's name what it is about: that one is meant."""
    fill(store, 60, days=1)
    write(store, "project_common.md", "rollback notes", "rollback notes on the service tests", days=10)
    write(store, "project_ledger.md", "rollback ledger", "rollback of the ledger schema in postgres", days=20)
    ranking = RecallRanking(store)

    found = [m.file_name for m, _ in ranking.search("how do we do a rollback?", 10)]
    assert found == ["project_ledger.md", "project_common.md"]

    # Later notes make the ledger's words the folder's everyday words: the next search knows it.
    for i in range(80):
        days = 30 + i / 100
        write(store, f"project_ledger_{i}.md", f"ledger {i}", "the ledger schema in postgres", days=days)
    found = [m.file_name for m, _ in ranking.search("how do we do a rollback?", 10)]
    assert found == ["project_common.md", "project_ledger.md"]
