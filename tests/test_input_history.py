"""The input history holds every line typed (a refused secret, `!` commands): it is kept 0600 in
a 0700 folder whatever the umask, and an older, wider one is narrowed at start and still loaded."""

from __future__ import annotations

import os

from mini_claude.core.config import history_file
from mini_claude.ui.repl.input_history import open_history
from tests.cli_harness import Cli
from tests.kit import mode

ENTRY = "\n# 2026-01-01 10:00:00.000000\n+!cat ~/.aws/credentials\n"


def test_a_new_history_is_private_from_the_first_line(umask: int) -> None:
    history, warning = open_history()
    history.append_string("!env | grep TOKEN")

    path = history_file()
    assert warning is None
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert "+!env | grep TOKEN" in path.read_text()
    # A platform folder missing above it is made 0700, as the XDG spec asks.
    assert mode(path.parent.parent) == 0o700


def test_an_older_wider_history_is_narrowed_and_still_loaded(umask: int) -> None:
    path = history_file()
    path.parent.mkdir(parents=True)
    path.write_text(ENTRY)
    path.parent.chmod(0o755)
    path.chmod(0o644)

    history, warning = open_history()

    assert warning is None
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert list(history.load_history_strings()) == ["!cat ~/.aws/credentials"]


def test_a_history_reached_by_a_symlink_in_its_folder_narrows_the_file_itself() -> None:
    path = history_file()
    path.parent.mkdir(parents=True)
    real = path.parent / "history.kept"
    real.write_text(ENTRY)
    real.chmod(0o666)
    path.symlink_to(real.name)

    _, warning = open_history()

    assert warning is None and mode(real) == 0o600
    assert os.path.islink(path)  # the user's link stays


def test_the_repl_keeps_what_is_typed_in_a_private_history(cli: Cli) -> None:
    path = history_file()
    path.parent.mkdir(parents=True)
    path.write_text(ENTRY)
    path.parent.chmod(0o755)
    path.chmod(0o644)

    with cli.terminal() as term:
        term.wait_until_ready()
        term.type("\x1b[A")  # Up: the older entry is there
        term.expect(r"cat ~/\.aws/credentials")
        term.ctrl("c")
        term.submit("!echo typed-now")
        term.expect("typed-now")
        term.expect_prompt()
        term.submit("/exit")
        assert term.wait_exit() == 0

    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    assert "+!echo typed-now" in path.read_text()
