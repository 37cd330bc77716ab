"""Keys typed before the prompt was ready: read first, with Enter meaning Enter."""

from __future__ import annotations

import os
import pty
import select
import termios
from collections.abc import Iterator

import pytest
from prompt_toolkit.input import Input, create_input
from prompt_toolkit.input.typeahead import get_typeahead
from prompt_toolkit.keys import Keys

from mini_claude.ui.repl.typeahead import CTRL_D, keys_typed_ahead, read_pending, typeahead_passed_to_prompt


def test_a_line_typed_ahead_ends_with_enter_not_a_newline_key() -> None:
    keys = keys_typed_ahead("next 部\n".encode())

    assert [k.key for k in keys] == [*"next 部", Keys.ControlM]


def test_lines_typed_ahead_are_one_message_never_split() -> None:
    """A multi-line paste while a reply streams stays one message; its last line end sends it."""
    keys = keys_typed_ahead(b"line one\nline two\n")

    assert [k.key for k in keys] == [*"line one", Keys.ControlJ, *"line two", Keys.ControlM]


def test_a_line_still_being_typed_is_not_sent() -> None:
    """Line mode hands over whole lines only; the rest of a paste comes in raw mode."""
    keys = keys_typed_ahead(b"first line\n", raw=b"second, unfinish")

    assert [k.key for k in keys] == [*"first line", Keys.ControlJ, *"second, unfinish"]


def test_enter_then_ctrl_d_sends_then_exits() -> None:
    keys = keys_typed_ahead(b"bye\n" + CTRL_D)

    assert [k.key for k in keys] == [*"bye", Keys.ControlM, Keys.ControlD]


def test_escape_sequences_typed_ahead_stay_keys() -> None:
    keys = keys_typed_ahead(b"ab\x1b[D\n")

    assert [k.key for k in keys] == ["a", "b", Keys.Left, Keys.ControlM]


def test_reading_what_is_pending_never_blocks() -> None:
    read_end, write_end = os.pipe()
    try:
        assert read_pending(read_end) == b""
        os.write(write_end, b"typed ahead\n")
        assert read_pending(read_end) == b"typed ahead\n"
    finally:
        os.close(read_end)
        os.close(write_end)


def test_end_of_file_comes_back_as_ctrl_d() -> None:
    """Line mode turns Ctrl+D on an empty line into an end-of-file read."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"bye\n")
    os.close(write_end)
    try:
        assert read_pending(read_end) == b"bye\n" + CTRL_D
    finally:
        os.close(read_end)


def test_no_usable_input_means_nothing_typed_ahead() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    os.close(write_end)

    assert read_pending(read_end) == b""


def test_enter_pressed_as_raw_mode_began_sends_the_line() -> None:
    # Line mode had nothing whole yet; by the switch to raw mode the terminal had ended the line.
    keys = keys_typed_ahead(b"", raw=b"read @evil.txt\n")
    assert keys[-1].key == Keys.ControlM
    assert Keys.ControlJ not in [k.key for k in keys]


@pytest.fixture
def terminal() -> Iterator[tuple[int, Input]]:
    """A pseudo-terminal in line mode: the keyboard end, and the prompt's input on the other end."""
    keyboard, tty = pty.openpty()
    with open(tty, encoding="utf-8") as tty_file:
        try:
            yield keyboard, create_input(tty_file)
        finally:
            os.close(keyboard)


def _typed_as_read(tty: int) -> bytes:
    assert select.select([tty], [], [], 5)[0], "the keys never arrived"
    return os.read(tty, 1024)


def test_a_line_typed_just_before_the_prompt_reads_keeps_its_enter(terminal) -> None:
    # Typed after what was typed ahead was read, before the prompt's own raw mode: Enter must
    # not become line mode's "\n" (Ctrl+J, a new line), or the command sits in the prompt unsent.
    keyboard, prompt_input = terminal
    os.write(keyboard, b"typed ahead\r")
    with typeahead_passed_to_prompt(prompt_input):
        assert [k.key for k in get_typeahead(prompt_input)][-1] == Keys.ControlM
        os.write(keyboard, b"/memory path\r")
        assert _typed_as_read(prompt_input.fileno()) == b"/memory path\r"
    assert termios.tcgetattr(prompt_input.fileno())[3] & termios.ICANON, "line mode is back after"
