"""The recall ranking's index file under attack and under crashes: corrupt, truncated, planted,
symlinked, a FIFO, unwritable, a full disk, deleted mid-run, two sessions at once; and messages
written in FTS5 query syntax. Recall must still offer the right memories, never follow the link,
never hang, and log at most one line.

The ranking's ordinary behaviour: tests/test_memory_ranking.py."""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mini_claude.memory.recall.ranking import RecallRanking
from mini_claude.memory.recall.ranking_index import INDEX_FILE
from mini_claude.memory.store.memory_store import MemoryStore
from tests.adversarial.cases import case
from tests.kit import memory_text, must_finish_within

LIMIT = 200
QUERY = "how do we deploy the payments service?"
TARGET = "project_payments_deploys.md"
SECOND_NS = 10**9
DAY_NS = 86_400 * SECOND_NS


def seeded_store(folder: Path) -> MemoryStore:
    """300 newer memories about other things, and one old one about payments deploys."""
    store = MemoryStore(folder)
    store.root.mkdir(parents=True)
    now = time.time_ns()
    # Through one folder descriptor, each file dated through its own: a third of the CPU of
    # Path.write_text and os.utime by name, for the same files.
    folder_fd = os.open(store.root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(300):
            text = memory_text(f"billing tests {i}", "notes on the billing tests", body="x\n")
            write_dated(folder_fd, f"project_other_{i:03}.md", text, now - i * SECOND_NS)
        text = memory_text("payments deploys", "payments ship with the Thursday release train")
        write_dated(folder_fd, TARGET, text, now - 400 * DAY_NS)
    finally:
        os.close(folder_fd)
    return store


def write_dated(folder_fd: int, name: str, text: str, mtime_ns: int) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666, dir_fd=folder_fd)
    try:
        os.write(fd, text.encode())
        os.utime(fd, ns=(mtime_ns, mtime_ns))
    finally:
        os.close(fd)


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return seeded_store(tmp_path / "memory")


@pytest.fixture(scope="module")
def indexed_store(tmp_path_factory: pytest.TempPathFactory) -> MemoryStore:
    """`store` with its index saved, shared by the tests that only query it: each opens the index
    afresh, as the next session would, instead of building it from the 301 files again."""
    store = seeded_store(tmp_path_factory.mktemp("indexed") / "memory")
    RecallRanking(store).candidates(QUERY, LIMIT)
    assert_valid_index(store.root / INDEX_FILE)
    return store


@pytest.fixture
def index(store: MemoryStore) -> Path:
    return store.root / INDEX_FILE


def ranking_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "mini_claude.recall"]


def first_offered(store: MemoryStore, ranking: RecallRanking | None = None, query: str = QUERY) -> str:
    chosen = (ranking or RecallRanking(store)).candidates(query, LIMIT)
    assert len(chosen) == LIMIT
    return chosen[0].file_name


def assert_valid_index(index: Path, memories: int = 301) -> None:
    assert index.is_file() and not index.is_symlink()
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as saved:
        assert saved.execute("SELECT count(*) FROM files").fetchone()[0] == memories


def saved_index(store: MemoryStore, index: Path) -> bytes:
    RecallRanking(store).candidates(QUERY, LIMIT)
    return index.read_bytes()


# --- a damaged or planted index file ------------------------------------------------------------------


@case("memory", "garbage, a truncated copy or an empty file: rebuilt from the memory files, one log line")
@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "flipped bytes"])
def test_a_damaged_index_is_rebuilt(
    store: MemoryStore, index: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    good = saved_index(store, index)
    damaged = {
        "garbage": os.urandom(len(good)),
        "truncated": good[: len(good) // 2],
        "empty": b"",
        "flipped bytes": good[:4096] + bytes(b ^ 0x5A for b in good[4096:8192]) + good[8192:],
    }[damage]
    index.write_bytes(damaged)
    caplog.set_level(logging.DEBUG, logger="mini_claude")

    assert first_offered(store) == TARGET
    assert_valid_index(index)
    assert len(ranking_lines(caplog)) <= 1


@case("memory", "an index with a trigger or extra table planted in it: discarded unread, nothing of it runs")
def test_an_index_with_planted_sql_is_discarded(store: MemoryStore, index: Path) -> None:
    saved_index(store, index)
    with sqlite3.connect(index) as planted:
        planted.execute("CREATE TABLE loot(x)")
        planted.execute(
            "CREATE TRIGGER grab AFTER DELETE ON files BEGIN INSERT INTO loot VALUES (old.file_name); END"
        )
    planted.close()
    (store.root / "project_other_000.md").unlink()  # an update that would fire the trigger

    assert first_offered(store) == TARGET
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as saved:
        names = {row[0] for row in saved.execute("SELECT name FROM sqlite_schema")}
    assert "loot" not in names and "grab" not in names


@case("memory", "an index whose indexed text was altered (none, punctuation, a 1,000-letter word): ranks")
def test_an_index_with_altered_text_still_ranks(store: MemoryStore, index: Path) -> None:
    """Such an index is ours in shape, so it is loaded: the ranking must not trust its text to be
    the words it writes (how specific a memory's words are is read from that text)."""
    saved_index(store, index)
    altered = {
        "project_other_000.md": (None, None, None),
        "project_other_001.md": ("payments a.b,c", "d-e f'g", "x"),
        "project_other_002.md": ("payments", "x" * 1000, ""),
    }
    with sqlite3.connect(index) as tampered:
        for file_name, (name, description, body) in altered.items():
            (row,) = tampered.execute("SELECT id FROM files WHERE file_name = ?", (file_name,)).fetchone()
            tampered.execute(
                "UPDATE terms SET name = coalesce(?, 'payments'), description = ?, body = ? WHERE rowid = ?",
                (name, description, body, row),
            )
    tampered.close()

    found = [memory.file_name for memory, _ in RecallRanking(store).search(QUERY, 10)]

    assert found[0] == TARGET
    assert set(altered) <= set(found)  # they say "payments": ranked, not dropped


@case("memory", "the index is a symlink to a file elsewhere: never followed; the target stays untouched")
def test_a_symlinked_index_is_replaced_not_followed(store: MemoryStore, index: Path, tmp_path: Path) -> None:
    precious = tmp_path / "precious.db"
    precious.write_bytes(b"the user's own file\n")
    saved_index(store, index)
    good = index.read_bytes()
    index.unlink()
    precious_copy = tmp_path / "copy.db"
    precious_copy.write_bytes(good)
    index.symlink_to(precious_copy)  # even a valid index behind the link is not read

    assert first_offered(store) == TARGET

    assert precious_copy.read_bytes() == good
    assert_valid_index(index)
    index.unlink()
    index.symlink_to(precious)
    assert first_offered(store) == TARGET
    assert precious.read_bytes() == b"the user's own file\n"


@case("memory", "the index is a FIFO or a huge sparse file: not read (no hang), replaced by a real index")
@pytest.mark.parametrize("kind", ["fifo", "huge"])
def test_a_special_or_huge_index_is_not_read(store: MemoryStore, index: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(index)
    else:
        with index.open("wb") as handle:
            handle.truncate(8 << 30)  # 8 GB, sparse

    with must_finish_within(30):
        assert first_offered(store) == TARGET

    assert_valid_index(index)


@case("memory", "another program holds SQLite and flock locks on the index: recall neither waits nor fails")
def test_a_locked_index_does_not_hold_up_recall(store: MemoryStore, index: Path) -> None:
    saved_index(store, index)
    (store.root / "project_other_000.md").unlink()  # so the recall has an update to save
    holder = sqlite3.connect(index, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    with index.open("rb") as locked:
        fcntl.flock(locked, fcntl.LOCK_EX)
        try:
            with must_finish_within(30):
                assert first_offered(store) == TARGET
        finally:
            holder.close()
    assert_valid_index(index, memories=300)


# --- an index that cannot be written -------------------------------------------------------------------


@case("memory", "a directory where the index goes: ranking works in memory, one log line, directory kept")
def test_an_unwritable_index_path_keeps_the_ranking_in_memory(
    store: MemoryStore, index: Path, caplog: pytest.LogCaptureFixture
) -> None:
    index.mkdir()
    (index / "keep").write_text("mine\n")
    caplog.set_level(logging.DEBUG, logger="mini_claude")
    ranking = RecallRanking(store)

    assert first_offered(store, ranking) == TARGET
    (store.root / "project_other_001.md").unlink()
    assert first_offered(store, ranking) == TARGET

    assert (index / "keep").read_text() == "mine\n"
    assert len(ranking_lines(caplog)) == 1
    assert not list(store.root.glob(".*.tmp"))


@case("memory", "a read-only index file: read as it is, then replaced (never written into) on a change")
def test_a_read_only_index_file_is_replaced_on_change(store: MemoryStore, index: Path) -> None:
    saved_index(store, index)
    index.chmod(0o400)
    (store.root / "project_kafka.md").write_text(memory_text("kafka retention", "topics keep seven days"))

    assert first_offered(store, query="kafka retention") == "project_kafka.md"
    assert_valid_index(index, memories=302)
    assert index.stat().st_mode & 0o777 == 0o600


@case("memory", "a read-only memory folder: ranking works in memory, one log line")
@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders anyway")
def test_a_read_only_memory_folder_keeps_the_ranking_in_memory(
    store: MemoryStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mini_claude")
    store.root.chmod(0o500)
    try:
        assert first_offered(store) == TARGET
    finally:
        store.root.chmod(0o700)
    assert len(ranking_lines(caplog)) == 1


FULL_DISK = """
import logging, resource, signal, sys
from pathlib import Path
from mini_claude.memory.recall.ranking import RecallRanking
from mini_claude.memory.store.memory_store import MemoryStore
logging.basicConfig(level=logging.DEBUG, format="LOG %(message)s")
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
chosen = RecallRanking(MemoryStore(Path(sys.argv[1]))).candidates(sys.argv[2], 200)
print("FIRST", chosen[0].file_name)
"""


@case("memory", "the disk fills up while the index is saved: ranking still answers, no temp file left")
def test_a_full_disk_while_saving_leaves_no_trace(store: MemoryStore, index: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(store.root), QUERY],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip

    assert f"FIRST {TARGET}" in done.stdout
    assert len([line for line in done.stderr.splitlines() if line.startswith("LOG")]) == 1
    assert not index.exists() and not list(store.root.glob(".*.tmp"))


@case("memory", "the index deleted mid-session: the next recall writes it again")
def test_an_index_deleted_mid_session_comes_back(store: MemoryStore, index: Path) -> None:
    ranking = RecallRanking(store)
    first_offered(store, ranking)
    index.unlink()

    assert first_offered(store, ranking) == TARGET
    assert_valid_index(index)


# --- two sessions at once ----------------------------------------------------------------------------------

TWO_SESSIONS = """
import sys
from pathlib import Path
from mini_claude.memory.recall.ranking import RecallRanking
from mini_claude.memory.store.memory_store import MemoryStore
store = MemoryStore(Path(sys.argv[1]))
ranking = RecallRanking(store)
for i in range(15):
    name = f"{sys.argv[2]} note {i}"
    saved = store.save(name=name, description=f"{sys.argv[2]} wrote this", memory_type="project", body="x\\n")
    chosen = [m.file_name for m in ranking.candidates(f"{sys.argv[2]} note {i}", 200)]
    assert saved.path.name in chosen[:15], (saved.path.name, chosen[:5])
print("OK")
"""


@case(
    "memory", "two sessions saving and recalling at once: neither fails nor waits, every save offered after"
)
def test_two_sessions_updating_the_index_at_once(store: MemoryStore, index: Path) -> None:
    sessions = [
        subprocess.Popen(
            [sys.executable, "-c", TWO_SESSIONS, str(store.root), word],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for word in ("alpha", "bravo")
    ]
    outputs = [session.communicate(timeout=120) for session in sessions]

    assert [out.strip() for out, _ in outputs] == ["OK", "OK"], outputs
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as saved:
        assert saved.execute("SELECT count(*) FROM files").fetchone()[0] >= 301 + 15
    chosen = [m.file_name for m in RecallRanking(store).candidates("alpha bravo note", LIMIT)]
    assert {f"project_{word}_note_{i}.md" for word in ("alpha", "bravo") for i in range(15)} <= set(chosen)


# --- hostile messages ---------------------------------------------------------------------------------------


@case("memory", "FTS5 syntax in a message (quotes, *, NEAR, -, column:, NUL): matched as plain words")
@pytest.mark.parametrize(
    "message",
    ['"payments', 'payments" OR "*', "payments*", "NEAR(payments deploys, 0)", "-payments", "name:payments",
     "{name description}: payments", "payments\x00deploys", "^payments", "payments AND NOT deploys",
     "(((payments", "payments + deploys", "'; DROP TABLE files; --payments", "payments\udcff",
     "payments " * 5000],
)  # fmt: skip
def test_query_syntax_in_a_message_is_plain_words(
    indexed_store: MemoryStore, caplog: pytest.LogCaptureFixture, message: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="mini_claude")

    assert first_offered(indexed_store, query=message) == TARGET
    assert ranking_lines(caplog) == []


@case(
    "memory", "a message of bare query syntax (*, NEAR, OR, quotes): matches nothing, the newest are offered"
)
@pytest.mark.parametrize("message", ["*", '""', "OR OR", "NEAR()", "- * ^ : ( )", "\x00"])
def test_bare_query_syntax_matches_nothing(indexed_store: MemoryStore, message: str) -> None:
    chosen = [m.file_name for m in RecallRanking(indexed_store).candidates(message, LIMIT)]

    assert chosen == [f"project_other_{i:03}.md" for i in range(LIMIT)]
