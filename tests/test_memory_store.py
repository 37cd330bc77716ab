"""The memory directory as a user sees it: where it lives, the files in it, and MEMORY.md."""

from __future__ import annotations

import hashlib
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_claude.core import config
from mini_claude.core.errors import MemoryStoreError
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.frontmatter.codec import fold_value
from mini_claude.memory.listing import list_lines
from mini_claude.memory.section import memory_section
from mini_claude.memory.store.index import PROMPT_INDEX_MAX_BYTES, PROMPT_INDEX_MAX_LINES, clean_inline
from mini_claude.memory.store.memory_store import MemoryStore, SavedMemory
from mini_claude.memory.store.naming import MEMORY_TYPES, SLUG_MAX_BYTES, slugify
from tests.writers_kit import INDEX_LINE, SAVES_PER_WRITER, assert_every_save_kept

REPO = Path(__file__).resolve().parent.parent
TRUNCATION_NOTE = "keep index entries to one line under ~200 chars"


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "memory")


def save(
    store: MemoryStore,
    name: str,
    description: str = "what it is for",
    memory_type: str = "project",
    body: str = "Body.\n",
) -> SavedMemory:
    return store.save(name=name, description=description, memory_type=memory_type, body=body)


def index_lines(store: MemoryStore) -> list[str]:
    return (store.root / "MEMORY.md").read_text(encoding="utf-8").splitlines()


def entries(store: MemoryStore) -> list[str]:
    """The index's memory lines, checked to be well-formed."""
    title, *lines = index_lines(store)
    assert title == "# Memory index"
    for line in lines:
        assert INDEX_LINE.fullmatch(line), line
    return lines


def write_memory_by_hand(folder: Path, file_name: str, name: str, description: str, memory_type: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file_name
    path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: {memory_type}\n---\nBody\n")
    return path


# --- where memories live -------------------------------------------------------------------------


def test_memory_dir_is_under_home_keyed_by_a_hash_of_the_working_directory(
    project_dir: Path, isolated_env: Path
) -> None:
    digest = hashlib.sha256(os.getcwd().encode()).hexdigest()[:16]
    expected = isolated_env / ".mini-claude" / "projects" / digest / "memory"

    assert config.project_memory_dir() == expected
    assert config.load_settings().memory_dir == expected


def test_another_working_directory_gets_another_memory_dir(tmp_path: Path) -> None:
    assert config.project_memory_dir(str(tmp_path / "a")) != config.project_memory_dir(str(tmp_path / "b"))


def test_nothing_is_created_until_the_first_save_then_the_dir_is_private(
    project_dir: Path, isolated_env: Path
) -> None:
    store = MemoryStore(config.project_memory_dir())
    assert store.scan() == [] and not store.has_memories()
    store.refresh()
    store.rebuild_index()
    store.startup()
    assert "No memories saved yet" in memory_section(store)
    assert list_lines(store) == ["No memories saved yet."]
    assert not (isolated_env / ".mini-claude").exists()

    save(store, "first memory")

    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
    assert (store.root / "project_first_memory.md").is_file()


@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_every_folder_the_first_save_creates_is_private_whatever_the_umask(
    project_dir: Path, isolated_env: Path, umask: int
) -> None:
    """Under umask 000 a 0777 `~/.mini-claude` or `projects/` would let anyone rename a project's
    memory folder away and put one of their own, memories and all, in its place."""
    store = MemoryStore(config.project_memory_dir())
    old = os.umask(umask)
    try:
        save(store, "first memory")
    finally:
        os.umask(old)

    created = [store.root, store.root.parent, store.root.parent.parent, isolated_env / ".mini-claude"]
    assert {folder: stat.S_IMODE(folder.stat().st_mode) for folder in created} == dict.fromkeys(
        created, 0o700
    )


def test_a_folder_that_was_already_there_keeps_its_mode(project_dir: Path, isolated_env: Path) -> None:
    (isolated_env / ".mini-claude").mkdir(mode=0o755)
    (isolated_env / ".mini-claude").chmod(0o755)
    store = MemoryStore(config.project_memory_dir())

    save(store, "first memory")

    assert stat.S_IMODE((isolated_env / ".mini-claude").stat().st_mode) == 0o755
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700


# --- memory files --------------------------------------------------------------------------------


def test_a_saved_memory_is_frontmatter_with_name_description_type_then_the_body(store: MemoryStore) -> None:
    saved = save(store, "Integration tests", "never mock the database", "feedback", "Use the db fixture.\n")

    assert saved.created and saved.path == store.root / "feedback_integration_tests.md"
    parsed = frontmatter.parse(saved.path.read_text(encoding="utf-8"))
    assert parsed.fields == {
        "name": "Integration tests",
        "description": "never mock the database",
        "type": "feedback",
    }
    assert parsed.body == "Use the db fixture.\n"


@pytest.mark.parametrize("memory_type", MEMORY_TYPES)
def test_each_of_the_four_types_can_be_saved(store: MemoryStore, memory_type: str) -> None:
    assert save(store, "a fact", memory_type=memory_type).path.name == f"{memory_type}_a_fact.md"


@pytest.mark.parametrize(
    ("memory_type", "reason"),
    [
        ("note", "'note' is not one of user, feedback, project, reference"),
        ("User", "'User' is not one of"),
        ("", "lacks type"),
        ("project ", "'project ' is not one of"),
    ],
)
def test_types_are_a_closed_set(store: MemoryStore, memory_type: str, reason: str) -> None:
    with pytest.raises(MemoryStoreError, match=re.escape(reason)):
        save(store, "a fact", memory_type=memory_type)
    assert not store.root.exists()


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("部署流程", "部署流程"),
        ("Café déjà vu", "café_déjà_vu"),
        ("हिन्दी नोट", "हिन्दी_नोट"),
        ("Don't mock the DB!", "don_t_mock_the_db"),
    ],
)
def test_slug_keeps_letters_and_digits_of_any_script_readable(
    store: MemoryStore, name: str, slug: str
) -> None:
    assert save(store, name).path.name == f"project_{slug}.md"


@pytest.mark.parametrize("name", ["!!!", "../..", "/", "\u200b\u202e", "——", ".", "..."])
def test_slug_is_never_empty_even_for_names_without_letters(store: MemoryStore, name: str) -> None:
    saved = save(store, name)
    assert saved.path.parent == store.root
    assert saved.path.name.startswith("project_") and len(saved.path.name) > len("project_.md")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_slug_is_bounded_and_never_a_path_trick(name: str) -> None:
    slug = slugify(name)
    assert slug
    assert len(slug.encode("utf-8")) <= SLUG_MAX_BYTES
    assert "/" not in slug and "\\" not in slug and "\0" not in slug and os.sep not in slug
    assert ".." not in slug and slug not in (".", "..")
    assert all(ch.isprintable() for ch in slug)


def test_slug_of_a_very_long_cjk_name_is_cut_in_bytes_without_breaking_a_character(
    store: MemoryStore,
) -> None:
    saved = save(store, "部署" * 500)

    slug = saved.path.name.removeprefix("project_").removesuffix(".md")
    assert len(slug.encode("utf-8")) <= SLUG_MAX_BYTES
    assert set(slug) <= set("部署")


def test_a_new_name_whose_slug_is_taken_gets_its_own_file(store: MemoryStore) -> None:
    first = save(store, "Deploy flow!", "the first one", body="first\n")
    second = save(store, "deploy-flow", "the second one", body="second\n")

    assert second.created and second.path != first.path
    assert first.path.read_text().endswith("first\n")
    assert second.path.read_text().endswith("second\n")
    assert len(entries(store)) == 2


def test_the_same_name_again_updates_the_memory_in_place(store: MemoryStore) -> None:
    first = save(store, "Deploy Flow", "old description", body="old\n")
    again = save(store, "  deploy   FLOW ", "new description", body="new\n")

    assert not again.created and again.path == first.path
    assert [p.name for p in store.root.glob("*.md") if p.name != "MEMORY.md"] == [first.path.name]
    assert first.path.read_text().endswith("new\n")
    [line] = entries(store)
    assert "new description" in line and "old description" not in line


# --- MEMORY.md -----------------------------------------------------------------------------------


def test_index_is_a_title_then_one_line_per_memory(store: MemoryStore) -> None:
    save(store, "Role", "senior Go engineer", "user")
    save(store, "Dashboards", "grafana board for the API", "reference")

    lines = entries(store)

    assert sorted(lines) == [
        "- **[Dashboards](reference_dashboards.md)** (reference) — grafana board for the API",
        "- **[Role](user_role.md)** (user) — senior Go engineer",
    ]


def test_index_drops_a_deleted_memory(store: MemoryStore) -> None:
    save(store, "keep me")
    save(store, "drop me")
    [dropped] = [m for m in store.scan() if m.name == "drop me"]

    store.delete(dropped)

    assert not dropped.path.exists()
    assert [INDEX_LINE.fullmatch(line)[1] for line in entries(store)] == ["keep me"]


def test_startup_indexes_files_added_changed_or_removed_by_hand(store: MemoryStore) -> None:
    save(store, "changed by hand", "before")
    save(store, "removed by hand")
    (store.root / "project_removed_by_hand.md").unlink()
    path = store.root / "project_changed_by_hand.md"
    path.write_text(path.read_text().replace("before", "after"))
    write_memory_by_hand(store.root, "user_added.md", "added by hand", "a new fact", "user")

    MemoryStore(store.root).startup()  # a new session

    assert sorted(entries(store)) == [
        "- **[added by hand](user_added.md)** (user) — a new fact",
        "- **[changed by hand](project_changed_by_hand.md)** (project) — after",
    ]


def test_a_running_sessions_save_also_indexes_what_was_changed_by_hand_meanwhile(store: MemoryStore) -> None:
    """Index lines are remembered per file between rebuilds; a changed file gets a new one."""
    save(store, "changed by hand", "before")
    save(store, "left alone", "as it was")
    path = store.root / "project_changed_by_hand.md"
    path.write_text(path.read_text().replace("before", "after, a longer description"))

    save(store, "a new one", "saved by the session")

    assert sorted(entries(store)) == [
        "- **[a new one](project_a_new_one.md)** (project) — saved by the session",
        "- **[changed by hand](project_changed_by_hand.md)** (project) — after, a longer description",
        "- **[left alone](project_left_alone.md)** (project) — as it was",
    ]
    fresh = MemoryStore(store.root)
    fresh.rebuild_index()
    assert entries(fresh) == entries(store)  # what a new session would write, byte for byte


def test_startup_undoes_a_hand_written_index(store: MemoryStore) -> None:
    save(store, "real memory")
    (store.root / "MEMORY.md").write_text("# Memory index\n- **[ghost](ghost.md)** (user) — not a file\n")

    MemoryStore(store.root).startup()

    assert [INDEX_LINE.fullmatch(line)[1] for line in entries(store)] == ["real memory"]


BROKEN_FILES = {
    "project_unclosed.md": (b"---\nname: x\ndescription: y\ntype: project\nbody\n", "never closed"),
    "project_bad_type.md": (b"---\nname: x\ndescription: y\ntype: todo\n---\nbody\n", "'todo'"),
    "project_no_description.md": (b"---\nname: x\ntype: user\n---\nbody\n", "lacks description"),
    # (b"\xff\xfe…" would be UTF-16 by its byte order mark, and so a file of text)
    "project_binary.md": (b"\x00\x01\x02garbage\x00\xff", "looks like binary data"),
    "project_empty.md": (b"\n  \n", "an empty file"),
}


def test_a_broken_file_stays_untouched_out_of_the_index_and_is_flagged(store: MemoryStore) -> None:
    store.root.mkdir(parents=True)
    for file_name, (data, _) in BROKEN_FILES.items():
        (store.root / file_name).write_bytes(data)

    save(store, "good one")
    save(store, "unclosed", "its slug matches a broken file")
    MemoryStore(store.root).startup()
    store.rebuild_index()

    for file_name, (data, _) in BROKEN_FILES.items():
        assert (store.root / file_name).read_bytes() == data, file_name
    assert sorted(INDEX_LINE.fullmatch(line)[2] for line in entries(store)) == [
        "project_good_one.md",
        "project_unclosed_2.md",
    ]
    listing = list_lines(store)
    assert listing[0] == f"2 memories, {len(BROKEN_FILES)} broken files:"
    for file_name, (_, reason) in BROKEN_FILES.items():
        [flag] = [line for line in listing if file_name in line]
        assert flag.startswith("[broken]") and reason in flag and "left out of the index" in flag


HOSTILE_TEXTS = [
    "line one\nline two\r\nline three\rfour",
    "see [this](http://evil) and ](x) **bold** `code` <b>",
    "x" * 10_000,
    "部" * 3_000,
    "zero\u200bwidth\u200d and \u202ebidi\u202c \u2066isolate\u2069 \ufeff",
    "separators\u2028and\u2029more\x85\x0b\x0c\x1c",
    "\n\nafter blank lines\n",
]


@pytest.mark.parametrize("text", HOSTILE_TEXTS, ids=range(len(HOSTILE_TEXTS)))
def test_hostile_names_and_descriptions_keep_one_index_line_per_memory(store: MemoryStore, text: str) -> None:
    save(store, text, "plain description")
    save(store, "plain name", text)
    save(store, text + " 2", text[:500])

    lines = entries(store)

    assert len(lines) == 3
    for line in lines:
        assert "\u200b" not in line and "\u202e" not in line and "\u2028" not in line
        assert len(line) < 500  # bounded however long the text (name and file name are cut)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_inline_cleaning_removes_exactly_the_invisible_characters(text: str) -> None:
    """The quick path (nothing to remove) gives what the character-by-character filter gives."""
    invisible = {"Cc", "Cf", "Co", "Cs"}
    visible = "".join(ch for ch in fold_value(text) if unicodedata.category(ch) not in invisible)
    expected = " ".join(visible.split())
    assert clean_inline(text, 1000) == expected


VISIBLE_TEXT = st.text(min_size=1, max_size=200).filter(str.strip)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(VISIBLE_TEXT, VISIBLE_TEXT), min_size=1, max_size=4))
def test_any_names_and_descriptions_give_one_well_formed_index_line_each(
    memories: list[tuple[str, str]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = MemoryStore(Path(folder) / "memory")
        for name, description in memories:
            save(store, name, description)
        assert len(entries(store)) == len({m.name for m in store.scan()})
        assert all(m.problem is None for m in store.scan())


def test_a_hand_named_file_with_a_line_break_in_its_name_keeps_the_index_one_line_each(
    store: MemoryStore,
) -> None:
    write_memory_by_hand(store.root, "user_a\nb.md", "newline", "in the file name", "user")
    write_memory_by_hand(store.root, "user_c\u2028d.md", "separator", "in the file name", "user")
    write_memory_by_hand(store.root, "user_spaced name (1).md", "spaces", "and parentheses", "user")
    raw_name = os.path.join(os.fsencode(store.root), b"user_latin1_\xe9t\xe9.md")
    with open(raw_name, "wb") as handle:  # a name that is not UTF-8
        handle.write(b"---\nname: latin1\ndescription: not utf-8\ntype: user\n---\nBody\n")

    store.startup()

    assert len(entries(store)) == 4


def test_a_header_too_long_to_read_back_is_refused_instead_of_saved_broken(store: MemoryStore) -> None:
    with pytest.raises(MemoryStoreError, match="description"):
        save(store, "n" * 10_000, "部署" * 5_000)

    assert store.scan() == []


@pytest.mark.parametrize(("name", "description"), [("", "d"), ("  \n ", "d"), ("n", ""), ("n", "\u2028\t")])
def test_an_empty_name_or_description_is_refused_instead_of_saved_broken(
    store: MemoryStore, name: str, description: str
) -> None:
    with pytest.raises(MemoryStoreError, match=r"name|description"):
        save(store, name, description)

    assert store.scan() == []


def test_a_long_name_and_description_that_fit_are_saved_and_indexed(store: MemoryStore) -> None:
    save(store, "n" * 10_000, "d" * 5_000)

    [memory] = store.scan()
    assert memory.problem is None
    assert len(entries(store)) == 1


READ_PAUSE_S = 0.001  # between the reads a session makes while the two save
SAVER = f"""
import sys
from pathlib import Path
from mini_claude.memory.store.memory_store import MemoryStore
folder, tag = Path(sys.argv[1]), sys.argv[2]
store = MemoryStore(folder)
print("ready", flush=True)
sys.stdin.readline()  # "go": both start saving at the same moment
for i in range({SAVES_PER_WRITER}):
    # Different names with the same slug: only the lock keeps the two from picking one file name.
    name = f"Shared memory {{i}}" if tag == "alpha" else f"shared-memory-{{i}}"
    store.save(name=name, description=f"saved by {{tag}}", memory_type="project", body=f"{{i}}\\n")
"""


def test_two_processes_saving_100_memories_each_lose_none_and_the_index_is_never_half_written(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "memory"
    command = [sys.executable, "-c", SAVER, str(folder)]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True, "cwd": REPO}
    processes = [subprocess.Popen([*command, tag], **pipes) for tag in ("alpha", "beta")]
    try:
        for process in processes:
            assert process.stdout and process.stdout.readline() == "ready\n", "a saver did not start"
        for process in processes:
            assert process.stdin
            process.stdin.write("go\n")
            process.stdin.flush()
        reads = 0
        while any(process.poll() is None for process in processes):  # meanwhile, read as a session would
            try:
                text = (folder / "MEMORY.md").read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            reads += 1
            assert text.startswith("# Memory index\n") and text.endswith("\n")  # never half-written
            assert all(INDEX_LINE.fullmatch(line) for line in text.splitlines()[1:])
            # A breath between reads: some 700 reads, not 4,000 of a core spinning. An index
            # written in place (truncated, then written) was still caught in every run.
            time.sleep(READ_PAUSE_S)
        assert [process.wait(timeout=60) for process in processes] == [0, 0]
    finally:
        for process in processes:
            process.kill()
            process.communicate()
    assert reads > 0

    saved = ["saved by alpha"] * SAVES_PER_WRITER + ["saved by beta"] * SAVES_PER_WRITER
    assert_every_save_kept(folder, saved)


# --- the index in the system prompt --------------------------------------------------------------


def prompt_index(store: MemoryStore) -> tuple[list[str], str]:
    """The index lines shown in the system prompt, and the note after them ("" if none)."""
    section = memory_section(store)
    inner = section.split("<memory-index folder=", 1)[1].split(">\n", 1)[1].split("\n</memory-index>", 1)[0]
    note = section.split("</memory-index>", 1)[1].strip()
    return inner.splitlines(), note


def test_prompt_index_is_cut_at_200_lines_with_a_note(store: MemoryStore) -> None:
    for i in range(250):
        write_memory_by_hand(store.root, f"project_m{i}.md", f"memory {i}", "short", "project")
    store.startup()

    shown, note = prompt_index(store)

    assert len(shown) == PROMPT_INDEX_MAX_LINES == 200
    assert shown == entries(store)[:200]
    assert TRUNCATION_NOTE in note.lower() and "200 of the 250 memories" in note


def test_prompt_index_is_cut_at_25000_bytes_on_a_line_boundary_utf8_safe(store: MemoryStore) -> None:
    for i in range(120):
        write_memory_by_hand(store.root, f"project_m{i}.md", f"记忆 {i}", "部署" * 70, "project")
    store.startup()
    full = entries(store)

    shown, note = prompt_index(store)

    assert len("\n".join(full).encode()) > PROMPT_INDEX_MAX_BYTES
    assert len("\n".join(shown).encode()) <= PROMPT_INDEX_MAX_BYTES == 25_000
    assert shown == full[: len(shown)]  # whole lines, none cut in the middle
    assert "\ufffd" not in "\n".join(shown)
    assert TRUNCATION_NOTE in note.lower()


def test_a_small_index_is_shown_whole_without_a_note(store: MemoryStore) -> None:
    save(store, "only one", "short")

    shown, note = prompt_index(store)

    assert shown == entries(store) and note == ""
