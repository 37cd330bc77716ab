"""The debug log holds the start of every message and every permission answer with its path or
command: like the input history it is 0600 in a 0700 folder whatever the umask, and a log an
older version left wider is narrowed at start and still appended to."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_claude.core import config
from mini_claude.core.debug_log import setup_logging
from tests.kit import mode

OLD_RECORD = "2026-01-01 10:00:00 1 MainThread mini_claude INFO an older session\n"


@pytest.fixture
def our_log(isolated_env: Path) -> Iterator[Path]:
    """The log as a session sets it up; the handler it adds is taken off afterwards."""
    before = list(logging.getLogger().handlers)
    yield config.log_file()
    root = logging.getLogger()
    for handler in root.handlers[:]:
        if handler not in before:
            root.removeHandler(handler)
            handler.close()


def log_line(text: str) -> None:
    logging.getLogger("mini_claude.test").info(text)
    for handler in logging.getLogger().handlers:
        handler.flush()


def test_a_new_log_is_private_from_its_first_record(umask: int, our_log: Path) -> None:
    assert setup_logging() is None
    log_line("permission asked: run_shell env | grep TOKEN")

    assert "env | grep TOKEN" in our_log.read_text()
    assert mode(our_log) == 0o600 and mode(our_log.parent) == 0o700
    # A platform folder missing above it is made 0700, as the XDG spec asks.
    assert mode(our_log.parent.parent) == 0o700


def test_an_older_wider_log_is_narrowed_and_kept(umask: int, our_log: Path) -> None:
    our_log.parent.mkdir(parents=True)
    our_log.write_text(OLD_RECORD)
    our_log.parent.chmod(0o755)
    our_log.chmod(0o644)

    assert setup_logging() is None
    log_line("a new session")

    assert mode(our_log) == 0o600 and mode(our_log.parent) == 0o700
    assert our_log.read_text().startswith(OLD_RECORD) and "a new session" in our_log.read_text()
