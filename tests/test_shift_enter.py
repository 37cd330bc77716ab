"""Shift+Enter is a line break where the terminal sends it as a key of its own: CSI u
(`ESC [13;2u`) or xterm's modifyOtherKeys (`ESC [27;2;13~`). Before, the first typed `[13;2u`
into the message and the second sent it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply
from tests.kit import held_reply, memory_text, seed_memories
from tests.test_repl_keys import sent_texts

CSI_U, MODIFY_OTHER_KEYS = "\x1b[13;2u", "\x1b[27;2;13~"


def test_shift_enter_in_either_encoding_is_a_line_break(cli: Cli, api_env: FakeAnthropic) -> None:
    api_env.stream_replies.append(text_reply("Three lines."))
    with cli.terminal() as term:
        term.wait_until_ready()
        term.type(f"line one{CSI_U}line two{MODIFY_OTHER_KEYS}")  # (sent, it would take the reply)
        term.submit("line three")
        shown = term.expect("Three lines.")
        term.expect_prompt()
    assert sent_texts(api_env) == ["line one\nline two\nline three"]
    assert "[13;2u" not in shown and "13~" not in shown


@pytest.mark.parametrize("shift_enter", [CSI_U, MODIFY_OTHER_KEYS], ids=["csi-u", "modify-other-keys"])
def test_shift_enter_typed_during_a_reply_is_a_line_break_in_the_next_prompt(
    cli: Cli, api_env: FakeAnthropic, shift_enter: str
) -> None:
    reply = held_reply("tick " * 40 + "END")
    api_env.stream_replies.extend([reply, text_reply("Got both lines.")])
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("count slowly")
        term.expect("tick tick")
        term.type_and_wait_until_read(f"first{shift_enter}second")  # typed ahead, not sent: no Enter yet
        reply.release.set()
        term.expect("END")
        term.expect("second")  # (sent, it would take the next reply)
        term.submit("")
        term.expect("Got both lines.")
    assert sent_texts(api_env) == ["count slowly", "first\nsecond"]


def test_shift_enter_at_a_question_is_not_its_enter(cli: Cli, project_dir: Path) -> None:
    """A yes/no question takes Enter as its default, no: a line break typed there is no answer."""
    folder = project_memory_dir(str(project_dir))
    seed_memories(folder, {"user_role.md": memory_text("role", "backend engineer", "user")})
    with cli.terminal() as term:
        term.wait_until_ready()
        term.submit("/memory rm role")
        term.expect(r"\[y/N\]:")
        term.type(MODIFY_OTHER_KEYS)  # was read as Enter: "no"
        term.expect("Press y for yes")
        term.type("y")
        term.expect(r"Deleted user_role\.md")
    assert not (folder / "user_role.md").exists()
