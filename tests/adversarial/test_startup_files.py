"""Files mini-claude reads on its own (CLAUDE.md, the input history, memory files) when a cloned
repository or a hand-made mess has turned them into symlinks out, FIFOs, devices, folders or huge
files: nothing hangs, nothing from outside where the file belongs is read, memory stays bounded,
and the user is told in one line; a file shown whole is cut at a limit that says where the rest is.

Files mini-claude writes on its own (MEMORY.md, `.lock`, memories): test_generated_files.py."""

from __future__ import annotations

import contextlib
import io
import os
import socket
import sys
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from mini_claude.app.instructions.reading import INSTRUCTION_FILE_MAX_BYTES as PROJECT_INSTRUCTIONS_MAX_BYTES
from mini_claude.app.system_prompt import build_system_prompt
from mini_claude.core import config
from mini_claude.core.events import Notice
from mini_claude.safety.protections import HOME_DOTFILE_REASON
from mini_claude.ui.commands.memory import command  # noqa: F401 - registers /memory
from mini_claude.ui.commands.registry import CommandContext, dispatch
from mini_claude.ui.render.console import make_renderer
from mini_claude.ui.subcommands.memory import run_memory_command
from tests.adversarial.cases import case
from tests.agent_harness import Harness, hold_replies_until_recall_settles
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import choose, main_calls, memory_text, must_finish_within, reminders_in, system_text

SECRET = "PRIVATE-KEY-7d41e"
HUGE_BYTES = 1_200_000_000  # sparse: costs no disk, but read whole it would take 1.2 GB of memory
PEAK_MAX_BYTES = 32 * 2**20  # what a bounded read may allocate, with room for everything around it
# The memory `/memory edit` checks before and after: read whole it would take twice what a bounded
# read may; its check reads every byte (twice), so 1.2 GB would cost seconds and prove no more.
EDITED_HUGE_BYTES = 2 * PEAK_MAX_BYTES
# System prompts built while CLAUDE.md keeps changing what it is: at least the first number, and on
# until both a read and a skip were seen (a read lands about once in a hundred builds).
SWAP_BUILDS = (300, 5000)


@pytest.fixture
def home(isolated_env: Path) -> Path:
    home = isolated_env.resolve()
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    return home


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path.resolve() / "outside"
    folder.mkdir()
    (folder / "notes.md").write_text(f"Outside notes {SECRET}\n")
    return folder


def one_message(api_env: FakeAnthropic) -> tuple[Harness, str]:
    """A session's first message (start-up runs in it); the session and its system prompt."""
    harness = Harness().start()
    api_env.stream_replies.append(text_reply("Answered."))
    with must_finish_within(20):
        ended = harness.turn("hello there")
    assert ended.final_text == "Answered.", harness.events
    return harness, system_text(main_calls(api_env)[0])


def warnings_of(harness: Harness) -> list[str]:
    return [notice.text for notice in harness.of_type(Notice) if notice.level == "warning"]


def assert_never_sent(api_env: FakeAnthropic, text: str) -> None:
    for request in api_env.requests:
        assert text not in str(request.body)


@contextlib.contextmanager
def peak_allocation() -> Iterator[list[int]]:
    """The most memory Python held at once inside the block (all threads), appended on exit."""
    peak: list[int] = []
    tracemalloc.start()
    try:
        yield peak
    finally:
        peak.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


# Text enough that the NUL bytes of a sparse file come after what decides "text or binary".
TEXT_BEFORE_THE_HOLE = "Notes on the deploy, kept long on purpose.\n" * 250


def huge_file(path: Path, head: str, size: int = HUGE_BYTES) -> Path:
    path.write_text(head)
    os.truncate(path, size)
    return path


# --- CLAUDE.md ------------------------------------------------------------------------------------


def plant_claude_md(project: Path, home: Path, outside: Path, how: str) -> None:
    claude = project / "CLAUDE.md"
    if how == "to_ssh_key":
        claude.symlink_to(home / ".ssh" / "id_ed25519")
    elif how == "chain_through_the_project":  # every hop but the last stays inside
        (project / "docs").mkdir()
        (project / "docs" / "second").symlink_to(home / ".ssh" / "id_ed25519")
        (project / "first").symlink_to("docs/second")
        claude.symlink_to("first")
    elif how == "dotdot":
        claude.symlink_to(Path("..") / outside.name / "notes.md")
    elif how == "through_a_symlinked_folder":  # the link itself points inside, its folder does not
        (project / "docs").symlink_to(outside, target_is_directory=True)
        claude.symlink_to("docs/notes.md")
    elif how == "dangling_outside":
        claude.symlink_to(outside / "not-yet.md")
    elif how == "to_dev_zero":  # read whole it would never end
        claude.symlink_to("/dev/zero")


@case(
    "paths",
    "CLAUDE.md leading out of the project (symlink, chain, `..`, symlinked folder, dangling, "
    "/dev/zero): not read, one one-line warning naming where it leads, the answer still comes",
)
@pytest.mark.parametrize(
    "how",
    [
        "to_ssh_key",
        "chain_through_the_project",
        "dotdot",
        "through_a_symlinked_folder",
        "dangling_outside",
        "to_dev_zero",
    ],
)
def test_claude_md_leading_out_of_the_project(
    api_env: FakeAnthropic, project_dir: Path, home: Path, outside: Path, how: str
) -> None:
    plant_claude_md(project_dir, home, outside, how)

    harness, system = one_message(api_env)

    assert "<project-instructions" not in system
    assert_never_sent(api_env, SECRET)
    [warning] = warnings_of(harness)
    assert warning.startswith("CLAUDE.md not read: ") and "\n" not in warning
    assert "outside" in warning, warning


@case(
    "paths",
    "CLAUDE.md as a FIFO, a folder, a socket, a symlink to a FIFO in the project: never opened "
    "blocking, not read, one warning saying what it is",
)
@pytest.mark.parametrize("kind", ["fifo", "folder", "socket", "symlink_to_a_fifo_inside"])
def test_claude_md_that_is_not_a_file(api_env: FakeAnthropic, project_dir: Path, kind: str) -> None:
    claude = project_dir / "CLAUDE.md"
    server = None
    if kind == "fifo":
        os.mkfifo(claude)
    elif kind == "folder":
        claude.mkdir()
        (claude / "notes.md").write_text("in a folder\n")
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind("CLAUDE.md")  # relative to the project (the current folder): no 108-byte limit
    else:
        os.mkfifo(project_dir / "pipe")
        claude.symlink_to("pipe")

    try:
        harness, system = one_message(api_env)
    finally:
        if server is not None:
            server.close()

    assert "<project-instructions" not in system
    [warning] = warnings_of(harness)
    expected = {"fifo": "named pipe (FIFO)", "folder": "directory", "socket": "socket"}
    assert expected.get(kind, "named pipe (FIFO)") in warning
    assert warning.startswith("CLAUDE.md not read: ") and "\n" not in warning


@case("paths", "CLAUDE.md symlinked to a file inside the project (directly or by a chain): read, no warning")
@pytest.mark.parametrize("hops", [1, 3])
def test_claude_md_symlinked_inside_the_project_is_read(
    api_env: FakeAnthropic, project_dir: Path, hops: int
) -> None:
    (project_dir / "docs").mkdir()
    (project_dir / "docs" / "AGENTS.md").write_text("Use tabs, never spaces.\n")
    target = "docs/AGENTS.md"
    for hop in range(hops - 1):
        (project_dir / f"hop{hop}").symlink_to(target)
        target = f"hop{hop}"
    (project_dir / "CLAUDE.md").symlink_to(target)

    harness, system = one_message(api_env)

    assert "Use tabs, never spaces." in system.split("<project-instructions")[1]
    assert warnings_of(harness) == []


@case("paths", "started in ~: a CLAUDE.md symlink to ~/.ssh/id_ed25519 is 'inside' yet not read; warned")
def test_claude_md_symlink_to_a_home_dotfile_when_started_in_home(
    api_env: FakeAnthropic, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(home)
    (home / "CLAUDE.md").symlink_to(".ssh/id_ed25519")

    harness, system = one_message(api_env)

    assert "<project-instructions" not in system
    assert_never_sent(api_env, SECRET)
    [warning] = warnings_of(harness)
    assert warning.startswith("CLAUDE.md not read: ") and HOME_DOTFILE_REASON in warning


@case("paths", "a 1.2 GB CLAUDE.md: only the first 40 KB read (memory stays small); cut, and warned")
def test_huge_claude_md_is_cut_without_reading_it_whole(api_env: FakeAnthropic, project_dir: Path) -> None:
    huge_file(project_dir / "CLAUDE.md", "Use tabs.\n" + "x" * PROJECT_INSTRUCTIONS_MAX_BYTES)

    harness, system = one_message(api_env)
    with peak_allocation() as peak:  # the prompt built again, alone: the SDK's import is not measured
        build_system_prompt(project_dir.resolve(), "")

    assert peak[0] < PEAK_MAX_BYTES, peak
    instructions = system.split("<project-instructions")[1].split("</project-instructions>")[0]
    assert "Use tabs." in instructions
    assert f"[CLAUDE.md was cut at {PROJECT_INSTRUCTIONS_MAX_BYTES} bytes: keep it shorter.]" in instructions
    assert len(instructions.encode()) < PROJECT_INSTRUCTIONS_MAX_BYTES + 1000
    [warning] = warnings_of(harness)
    assert "is 1.2 GB: only its first 40 KB are used" in warning


@case(
    "paths",
    "CLAUDE.md in Latin-1, a UTF-8 BOM, lone surrogates: read with replacements and one warning, no "
    "crash (NULs after a BOM are binary: test_mixed_encodings.py)",
)
def test_claude_md_with_odd_bytes(api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_dir / "CLAUDE.md").write_bytes(b"\xef\xbb\xbfCaf\xe9 rules here \xed\xa0\x80 end\n")

    harness, system = one_message(api_env)

    assert main_calls(api_env)[0].validation_error is None
    instructions = system.split("<project-instructions")[1]
    assert "Caf\ufffd rules here \ufffd\ufffd\ufffd end" in instructions
    [warning] = warnings_of(harness)
    assert warning.endswith(
        "CLAUDE.md: not valid UTF-8: shown with U+FFFD in 4 places (the first at byte "
        "offset 6); save it as UTF-8 to read it whole"
    ), warning


@case(
    "paths",
    "CLAUDE.md swapped among a file, a FIFO and a symlink to a key while it is read: never hangs, "
    "never reads the key",
)
def test_claude_md_swapped_while_it_is_read(project_dir: Path, home: Path) -> None:
    project = project_dir.resolve()
    claude, staged = project / "CLAUDE.md", project / "staged"
    claude.write_text("Use tabs.\n")
    stop = threading.Event()
    makers = (
        lambda: staged.write_text("Use tabs.\n"),
        lambda: os.mkfifo(staged),
        lambda: staged.symlink_to(home / ".ssh" / "id_ed25519"),
    )

    def swap() -> None:
        while not stop.is_set():
            for make in makers:
                make()
                os.replace(staged, claude)

    swapper = threading.Thread(target=swap, daemon=True)
    read, skipped = [], []
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the two threads finely, so the swaps land mid-read
    swapper.start()
    try:
        with must_finish_within(30):
            least, most = SWAP_BUILDS
            for built in range(1, most + 1):
                prompt = build_system_prompt(project, "", warn=skipped.append)
                assert SECRET not in prompt
                read.append("Use tabs." in prompt)
                if built >= least and any(read) and skipped:
                    break
    finally:
        stop.set()
        swapper.join(5)
        sys.setswitchinterval(switch_interval)

    assert any(read) and skipped  # it met the file and the swapped-in FIFO or symlink
    assert all("\n" not in warning and SECRET not in warning for warning in skipped)


@case("paths", "print mode with CLAUDE.md a FIFO: the answer on stdout, one warning line on stderr")
def test_print_mode_tells_a_skipped_claude_md_on_stderr(api_env: FakeAnthropic, project_dir: Path) -> None:
    os.mkfifo(project_dir / "CLAUDE.md")
    api_env.stream_replies.append(text_reply("Answered anyway."))

    result = Cli(project_dir).run("-p", "hello there", timeout=30)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Answered anyway.\n"
    [line] = [line for line in result.stderr.splitlines() if "CLAUDE.md" in line]
    assert line.startswith("CLAUDE.md not read: ") and "named pipe (FIFO)" in line


# --- the input history ------------------------------------------------------------------------------

HISTORY_SECRET = "cat ~/.aws/credentials history-5e2b"
HISTORY_ENTRY = f"\n# 2026-01-01 10:00:00.000000\n+{HISTORY_SECRET}\n"


def plant_history(path: Path, outside: Path, kind: str) -> Path | None:
    """Make the history file `kind`; returns a file that must end up unchanged, if any."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "regular":
        path.write_text(HISTORY_ENTRY)
        return None
    if kind == "fifo":
        os.mkfifo(path)
        return None
    if kind == "folder":
        path.mkdir()
        return None
    if kind == "huge":
        path.write_text(HISTORY_ENTRY)
        os.truncate(path, 20_000_000)
        return path
    victim = outside / "shell-history"
    victim.write_text(HISTORY_ENTRY)
    path.symlink_to(victim)
    return victim


@case(
    "paths",
    "the input history as a FIFO, a folder, a symlink out, 20 MB: the prompt comes, one warning, "
    "Up shows nothing from it, nothing is appended (a regular one: recalled)",
)
@pytest.mark.parametrize("kind", ["regular", "fifo", "folder", "symlink_out", "huge"])
def test_hostile_history_file(api_env: FakeAnthropic, project_dir: Path, outside: Path, kind: str) -> None:
    untouched = plant_history(config.history_file(), outside, kind)
    before = untouched.read_bytes()[:4096] + str(untouched.stat().st_size).encode() if untouched else b""
    cli = Cli(project_dir)

    with cli.terminal() as term:
        term.expect(r"/help for commands")
        shown = term.expect_prompt()
        term.type("\x1b[A")  # Up: the newest history entry, if history was loaded
        term.type("ZZ")
        shown += term.expect("ZZ")
        term.ctrl("c")  # clears the line
        term.submit("/exit")
        term.wait_exit()

    said = " ".join(shown.split())  # the terminal wraps a long line
    if kind == "regular":
        assert HISTORY_SECRET in said  # the control: this is how a loaded history would show
        assert "Input history not loaded" not in said
        return
    assert HISTORY_SECRET not in said
    assert said.count("Input history not loaded: ") == 1, said
    reason = {"fifo": "named pipe (FIFO)", "folder": "directory", "symlink_out": "outside", "huge": "20 MB"}
    assert reason[kind] in said.split("Input history not loaded: ")[1], said
    if untouched is not None:
        assert untouched.read_bytes()[:4096] + str(untouched.stat().st_size).encode() == before


# --- memory files read for recall and for display ----------------------------------------------------


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    folder = config.project_memory_dir()
    folder.mkdir(parents=True)
    return folder


@case(
    "memory",
    "a memory file that is a FIFO, a folder, a symlink to a FIFO: listed as broken with what it is; "
    "`memory show` ends at once with one line; nothing hangs",
)
@pytest.mark.parametrize("kind", ["fifo", "folder", "symlink_to_a_fifo_inside"])
def test_memory_file_that_is_not_a_file(project_dir: Path, memory_dir: Path, kind: str) -> None:
    path = memory_dir / "project_pipe.md"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(memory_dir / ".pipe")
        path.symlink_to(".pipe")
    cli = Cli(project_dir)

    listed = cli.run("memory", "list", timeout=30)
    shown = cli.run("memory", "show", "project_pipe.md", timeout=30)

    what = "a directory" if kind == "folder" else "a named pipe (FIFO)"
    assert f"[broken] project_pipe.md — {what}, not a file (not read)" in listed.stdout
    assert shown.returncode == 1 and shown.stdout == ""
    [line] = shown.stderr.splitlines()
    assert line.startswith("mini-claude: cannot read project_pipe.md: ") and what in line


@case(
    "memory",
    "a memory file symlinked outside the memory folder: `memory show` and `/memory show` refuse it "
    "(one line), its text never printed",
)
def test_memory_show_of_a_symlink_pointing_outside(project_dir: Path, memory_dir: Path, home: Path) -> None:
    (memory_dir / "project_key.md").symlink_to(home / ".ssh" / "id_ed25519")

    shown = Cli(project_dir).run("memory", "show", "project_key.md", timeout=30)
    in_repl = slash_memory("show project_key.md")

    assert shown.returncode == 1 and SECRET not in shown.stdout + shown.stderr
    [line] = shown.stderr.splitlines()
    assert "is a symlink to" in line and "outside" in line
    assert SECRET not in in_repl and "outside" in in_repl


def slash_memory(argument: str) -> str:
    """What `/memory ARGUMENT` prints in the REPL (its real command handler, a recording console)."""
    out = io.StringIO()
    # Wide enough that no line wraps: a long temp folder (as under pytest-xdist) must not split
    # the line that names the file.
    console = Console(file=out, width=2000, color_system=None)
    ctx = CommandContext(
        console, Harness().start().session, make_renderer(console, plain=True), lambda _: False
    )
    with must_finish_within(20), peak_allocation() as peak:
        dispatch(f"/memory {argument}", ctx)
    assert peak[0] < PEAK_MAX_BYTES, peak
    return out.getvalue()


@case(
    "memory",
    "`/memory edit` of a FIFO or a 64 MB memory: its before/after check never hangs or loads the file",
)
@pytest.mark.parametrize("kind", ["fifo", "huge"])
def test_memory_edit_of_a_fifo_or_a_huge_memory(
    project_dir: Path, memory_dir: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = memory_dir / "project_odd.md"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        huge_file(path, memory_text("odd", "a big one"), EDITED_HUGE_BYTES)
    monkeypatch.setenv("EDITOR", "true")  # an editor that changes nothing

    said = slash_memory("edit project_odd.md")

    assert ("No changes to project_odd.md." in said) == (kind == "huge"), said
    assert "project_odd.md" in said


@case(
    "memory",
    "a 1.2 GB memory file: `memory show` and `/memory show` print its first 100 KB, say it was cut "
    "and where the whole file is; memory stays small",
)
def test_memory_show_of_a_huge_memory_is_cut(
    project_dir: Path, memory_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = "Start.\n" + TEXT_BEFORE_THE_HOLE
    path = huge_file(memory_dir / "project_huge.md", memory_text("huge", "a big one", body=body))
    cut = f"[… cut: shown are the first 100 KB of 1.2 GB; the whole file is {path}]"

    with must_finish_within(20), peak_allocation() as peak:
        status = run_memory_command(config.load_settings(), "show", "huge")
    printed = capsys.readouterr().out
    in_repl = slash_memory("show huge")

    assert status == 0 and peak[0] < PEAK_MAX_BYTES, peak
    for shown in (printed, in_repl):
        assert "Start." in shown and cut in shown
        # 100 KB read; each NUL byte of it is shown written out, as the 4 characters `\x00`.
        assert len(shown.encode()) < 4 * 100_000 + 1000


@case("memory", "a 1.2 GB memory chosen by recall: its reminder holds 4 KB and says it was cut; memory small")
def test_recall_of_a_huge_memory_reads_only_the_cap(
    api_env: FakeAnthropic, project_dir: Path, memory_dir: Path
) -> None:
    harness = Harness().start()
    api_env.stream_replies.append(text_reply("Hello."))
    harness.turn("hello there")  # with no memories yet (no recall): the SDK's import is not measured
    body = "Thursdays.\n" + TEXT_BEFORE_THE_HOLE
    huge_file(memory_dir / "project_huge.md", memory_text("deploys", "how we deploy", body=body))
    api_env.plain_replies.append(choose("project_huge.md"))
    api_env.responder = hold_replies_until_recall_settles
    api_env.stream_replies.extend([tool_reply("list_files", {"pattern": "*"}), text_reply("On Thursdays.")])

    with must_finish_within(30), peak_allocation() as peak:
        harness.turn("how do we deploy?")

    assert peak[0] < PEAK_MAX_BYTES, peak
    [reminder] = reminders_in(main_calls(api_env)[2])
    assert "Thursdays." in reminder and "[… memory cut at 4096 bytes; read the file for the rest]" in reminder
    assert len(reminder.encode()) < 4096 + 2000
