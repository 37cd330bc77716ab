"""Saved transcripts under attack: a writer killed at any moment, two writers of one project at
once, a full disk, and the sessions folder or a transcript replaced by a symlink, a FIFO or a
file too large to load. Every complete record survives, nothing outside the folder is touched,
and nothing hangs."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mini_claude.core import config
from mini_claude.sessions.catalog import list_sessions
from mini_claude.sessions.loading.loader import load_transcript
from mini_claude.sessions.retention import remove_expired_sessions
from mini_claude.sessions.transcript.records import MAX_TRANSCRIPT_BYTES
from mini_claude.sessions.transcript.sessions_folder import SessionsFolderError, TranscriptError
from mini_claude.sessions.transcript.writer import TranscriptWriter
from tests.adversarial.cases import case
from tests.adversarial.transcript_writer import expected_messages, write_record
from tests.cli_harness import Cli

REPO = Path(__file__).resolve().parents[2]
RANDOM_KILLS = 8
MAX_KILL_DELAY = 0.1  # seconds of writing before the kill: up to ~15 MB of transcript, 1 MB records
START_TIMEOUT = 20.0
FILL_RECORD_BYTES = 20_000
FULL_DISK_BYTES = 256 * 1024
OLD = time.time() - 100 * 86_400


class WriterProcess:
    """transcript_writer.py in loop mode, and the records it has said are written."""

    def __init__(self, folder: Path, session_id: str | None = None) -> None:
        args = [sys.executable, "-m", "tests.adversarial.transcript_writer", "loop", str(folder)]
        self.process = subprocess.Popen(
            [*args, *([session_id] if session_id else [])], cwd=REPO, stdout=subprocess.PIPE, text=True
        )
        self.acked = 0
        self.session_id = ""
        self._first = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.session_id, number = line.split()
            self.acked = int(number) + 1
            self._first.set()

    def wait_started(self) -> None:
        assert self._first.wait(START_TIMEOUT), "the writer never wrote its first record"

    def kill(self) -> int:
        """SIGKILL: no handler, no cleanup. Returns how many records it had reported written."""
        self.process.kill()
        self.process.wait(5)
        self._reader.join(5)
        return self.acked


def assert_holds_every_acked_record(path: Path, acked: int) -> None:
    """All `acked` records are there, plus at most the one in flight; nothing else went wrong."""
    loaded = load_transcript(path)
    assert loaded.problems == []
    assert loaded.messages in (expected_messages(acked), expected_messages(acked + 1))


@pytest.fixture
def sessions_dir(project_dir: Path) -> Path:
    return config.project_sessions_dir(project_dir)


# --- crashes --------------------------------------------------------------------------------------


@case(
    "crashes",
    f"SIGKILL of a writer at {RANDOM_KILLS} random moments (records up to 1 MB): every reported record "
    "loads, at most the one in flight is lost, a resumed writer appends cleanly",
)
def test_sigkill_of_a_transcript_writer_at_random_moments(tmp_path: Path) -> None:
    rng = random.Random(10)  # the same moments on every run
    torn = 0
    for attempt in range(RANDOM_KILLS):
        folder = tmp_path / f"project{attempt}" / "sessions"
        writer = WriterProcess(folder)
        writer.wait_started()
        time.sleep(rng.uniform(0, MAX_KILL_DELAY))
        acked = writer.kill()
        path = folder / f"{writer.session_id}.jsonl"
        torn += not path.read_bytes().endswith(b"\n")

        assert_holds_every_acked_record(path, acked)

        resumed = TranscriptWriter.continuing(path, model="m", cwd="/work", project="/work")
        count = len(load_transcript(path).messages)
        write_record(resumed, 0)  # a user message: the next turn after resuming
        resumed.close()
        again = load_transcript(path)
        assert again.problems == [] and resumed.stopped == "closed"
        assert again.messages[-1]["content"][-1] == expected_messages(1)[0]["content"][0]
        assert len(again.messages) in (count, count + 1)
        shutil.rmtree(folder.parent)
    print(f"{torn} of {RANDOM_KILLS} kills left a torn last line")


@case("crashes", "two writers of one project forced onto the same session id: two files, none mixed")
def test_two_writers_at_once_never_share_a_file(sessions_dir: Path) -> None:
    writers = [WriterProcess(sessions_dir, session_id="5e" * 16) for _ in range(2)]
    for writer in writers:
        writer.wait_started()
    deadline = time.monotonic() + START_TIMEOUT
    while min(writer.acked for writer in writers) < 40 and time.monotonic() < deadline:
        time.sleep(0.01)
    counts = [writer.kill() for writer in writers]

    paths = sorted(sessions_dir.iterdir())
    assert len(paths) == 2 and writers[0].session_id != writers[1].session_id
    for writer, acked in zip(writers, counts, strict=True):
        assert_holds_every_acked_record(sessions_dir / f"{writer.session_id}.jsonl", acked)


def can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


def run_fill(command: list[str], **kw: object) -> dict:
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60, check=False, **kw)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def assert_stopped_cleanly(report: dict, reason: str) -> None:
    assert report["written"] > 3  # it did save until the disk was full
    (warning,) = report["warnings"]  # one line, once; later records are silently not saved
    assert warning.startswith("Session not saved from here on: cannot write ") and reason in warning
    assert warning.endswith("(the conversation goes on)") and "\n" not in warning
    assert report["loaded_as_expected"] and report["problems"] == []  # the torn last line: ignored


@case("crashes", "disk full (a real 256 KB tmpfs): one warning line, the session goes on, every record loads")
def test_a_full_disk_stops_saving_with_one_warning(tmp_path: Path) -> None:
    if not can_mount_tmpfs():
        pytest.skip("cannot mount a small tmpfs here (needs unshare -m and mount); see the EFBIG case")
    mount = tmp_path / "full"
    mount.mkdir()
    command = [
        "unshare", "-m", "sh", "-c",
        'mount -t tmpfs -o size="$1" tmpfs "$2" && cd "$3" && '
        'exec "$4" -m tests.adversarial.transcript_writer fill "$2/project/sessions" "$5"',
        "sh", str(FULL_DISK_BYTES), str(mount), str(REPO), sys.executable, str(FILL_RECORD_BYTES),
    ]  # fmt: skip
    report = run_fill(command)
    assert_stopped_cleanly(report, "No space left on device")
    assert report["file_size"] <= FULL_DISK_BYTES


@case(
    "crashes", "file size limit hit mid-line (RLIMIT_FSIZE, a real short write): one warning, all else loads"
)
def test_a_write_cut_short_by_the_file_size_limit(tmp_path: Path) -> None:
    import resource

    limit = 300_000

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # else the kernel kills the writer

    folder = tmp_path / "project" / "sessions"
    command = [
        sys.executable,
        "-m",
        "tests.adversarial.transcript_writer",
        "fill",
        str(folder),
        str(FILL_RECORD_BYTES),
    ]
    report = run_fill(command, preexec_fn=limited)
    assert_stopped_cleanly(report, "File too large")
    assert report["file_size"] == limit  # the last record was cut mid-line, at the limit


# --- paths -------------------------------------------------------------------------------------------


def refused_everywhere(sessions_dir: Path, cli: Cli) -> str:
    """A writer warns and writes nothing, listing exits 1, retention removes nothing; the reason."""
    warnings: list[str] = []
    writer = TranscriptWriter(sessions_dir, cwd="/", project="/", model="m", warn=warnings.append)
    writer.add("user", [{"type": "text", "text": "secret"}])
    writer.add("assistant", [{"type": "text", "text": "secret too"}])
    assert len(warnings) == 1 and warnings[0].startswith("Session not saved: ")
    with pytest.raises(SessionsFolderError) as raised:
        list_sessions(sessions_dir)
    result = cli.run("sessions", "list")
    assert result.returncode == 1 and result.stderr == f"mini-claude: {raised.value}\n"
    report = remove_expired_sessions(sessions_dir, retention_days=1, keep=None)
    assert report.removed == [] and report.problems == [f"old sessions not removed: {raised.value}"]
    return str(raised.value)


@case(
    "paths",
    "sessions folder symlinked to a folder outside the project's: refused with the reason, nothing written",
)
def test_sessions_folder_symlinked_outside(sessions_dir: Path, project_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "shared-with-everyone"
    outside.mkdir(mode=0o777)
    (outside / ("9" * 32 + ".jsonl")).write_text('{"type":"session"}\n')
    os.utime(outside / ("9" * 32 + ".jsonl"), (OLD, OLD))
    sessions_dir.parent.mkdir(parents=True)
    sessions_dir.symlink_to(outside)

    reason = refused_everywhere(sessions_dir, Cli(project_dir))

    assert reason == (
        f"{sessions_dir} is a symlink to {outside}, outside {sessions_dir.parent}: "
        "transcripts are not kept there (remove the link)"
    )
    assert sorted(p.name for p in outside.iterdir()) == ["9" * 32 + ".jsonl"]  # not written, not removed


@case("paths", "sessions folder is a symlink through .. into another project's folder: refused the same way")
def test_sessions_folder_symlinked_into_another_project(sessions_dir: Path, project_dir: Path) -> None:
    other = sessions_dir.parent.parent / ("0" * 16) / "sessions"
    other.mkdir(parents=True)
    sessions_dir.parent.mkdir()
    sessions_dir.symlink_to(Path("..") / ".." / ("0" * 16) / "sessions")
    refused_everywhere(sessions_dir, Cli(project_dir))
    assert list(other.iterdir()) == []


@case("paths", "sessions folder is a symlink to a folder inside the project's own folder: used")
def test_sessions_folder_symlinked_inside_its_project(sessions_dir: Path) -> None:
    real = sessions_dir.parent / "sessions-on-another-name"
    real.mkdir(parents=True)
    sessions_dir.symlink_to(real.name)
    writer = TranscriptWriter(sessions_dir, cwd="/", project="/", model="m")
    writer.add("user", [{"type": "text", "text": "kept"}])
    assert writer.stopped is None and (real / writer.path.name).is_file()
    assert [s.id for s in list_sessions(sessions_dir)] == [writer.session_id]


@case("paths", "a symlink planted at the new transcript's name: not followed, its target untouched")
def test_a_planted_symlink_at_the_transcripts_name_is_not_followed(
    sessions_dir: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    sessions_dir.mkdir(parents=True)
    (sessions_dir / ("7" * 32 + ".jsonl")).symlink_to(victim)
    writer = TranscriptWriter(sessions_dir, cwd="/", project="/", model="m", session_id="7" * 32)
    writer.add("user", [{"type": "text", "text": "hello"}])
    assert victim.read_text() == "precious\n"
    assert writer.session_id != "7" * 32 and writer.path.is_file() and not writer.path.is_symlink()


@case(
    "paths",
    "a transcript that is a symlink: not loaded, listed as such, not resumed, left alone by retention",
)
def test_a_symlinked_transcript_is_never_read_through(sessions_dir: Path, tmp_path: Path) -> None:
    real = TranscriptWriter(tmp_path / "elsewhere" / "sessions", cwd="/", project="/", model="m")
    real.add("user", [{"type": "text", "text": "not this project's"}])
    real.close()
    link = sessions_dir / ("8" * 32 + ".jsonl")
    sessions_dir.mkdir(parents=True)
    link.symlink_to(real.path)
    os.utime(link, (OLD, OLD), follow_symlinks=False)

    with pytest.raises(TranscriptError, match="is a symlink: transcripts are never read through one"):
        load_transcript(link)
    (listed,) = list_sessions(sessions_dir)
    assert listed.problem == f"{link.name} is a symlink: not read"
    warnings: list[str] = []
    TranscriptWriter.continuing(link, model="m", cwd="/", project="/", warn=warnings.append)
    assert len(warnings) == 1 and "cannot append" in warnings[0]
    assert remove_expired_sessions(sessions_dir, retention_days=1, keep=None).removed == []
    assert link.is_symlink() and real.path.read_bytes().count(b"\n") == 2


@case("paths", "a transcript that is a FIFO: load, list and retention return at once, nothing hangs")
def test_a_fifo_transcript_never_blocks(sessions_dir: Path) -> None:
    sessions_dir.mkdir(parents=True)
    fifo = sessions_dir / ("6" * 32 + ".jsonl")
    os.mkfifo(fifo)
    os.utime(fifo, (OLD, OLD))
    outcome: dict[str, object] = {}

    def attempt() -> None:
        try:
            load_transcript(fifo)
        except TranscriptError as error:
            outcome["load"] = str(error)
        outcome["list"] = [s.problem for s in list_sessions(sessions_dir)]
        outcome["retention"] = remove_expired_sessions(sessions_dir, retention_days=1, keep=None).removed

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "blocked on the FIFO"
    assert outcome == {
        "load": f"{fifo} is not a regular file: not read",
        "list": [f"{fifo.name} is not a regular file: not read"],
        "retention": [],
    }
    assert fifo.exists()


@case(
    "paths",
    f"a transcript over {MAX_TRANSCRIPT_BYTES // 2**20} MB: refused at once with the limit, listed as such",
)
def test_a_huge_transcript_is_refused_not_read(sessions_dir: Path) -> None:
    writer = TranscriptWriter(sessions_dir, cwd="/", project="/", model="m")
    writer.add("user", [{"type": "text", "text": "big"}])
    writer.close()
    os.truncate(writer.path, MAX_TRANSCRIPT_BYTES + 2**20)  # sparse: a hole after the header
    with pytest.raises(TranscriptError, match="more than the 200 MB a transcript may have"):
        load_transcript(writer.path)
    (listed,) = list_sessions(sessions_dir)
    assert listed.first_message == "big" and "200 MB" in (listed.problem or "")


@case("paths", "a header whose project path holds escape codes: the other-project message writes them out")
def test_a_hostile_header_cannot_reach_the_terminal(
    sessions_dir: Path, tmp_path: Path, project_dir: Path
) -> None:
    from mini_claude.sessions.lookup import SessionNotFound, find_session

    other = sessions_dir.parent.parent / ("1" * 16) / "sessions"
    writer = TranscriptWriter(
        other, cwd="/x", project="/tmp/\x1b[2J\x1b]0;owned\x07", model="m", session_id="ab" * 16
    )
    writer.add("user", [{"type": "text", "text": "hi"}])
    with pytest.raises(SessionNotFound) as raised:
        find_session(sessions_dir, "abab")
    assert "\x1b" not in str(raised.value) and "\\x1b[2J" in str(raised.value)


@case("paths", "a transcript saved by an editor with a UTF-8 byte-order mark: loads")
def test_a_byte_order_mark_is_tolerated(sessions_dir: Path) -> None:
    writer = TranscriptWriter(sessions_dir, cwd="/", project="/", model="m")
    writer.add("user", [{"type": "text", "text": "hi"}])
    writer.close()
    writer.path.write_bytes(b"\xef\xbb\xbf" + writer.path.read_bytes())
    assert load_transcript(writer.path).messages == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]
