"""A byte order mark followed by what is no text in its encoding: UTF-16 after a UTF-8 mark (a file
converted twice, or two files glued), NUL characters after a UTF-16 mark, binary data after
either. None reaches the model as NUL-interleaved text: each place that reads a file as text
(CLAUDE.md, a memory, read_file, an `@file`) skips it with one line saying why."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from mini_claude.core.config import project_memory_dir
from mini_claude.core.events import Notice
from tests.adversarial.cases import case
from tests.agent_harness import Harness, hold_replies_until_recall_settles
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import choose, main_calls, memory_text, reminders_in, system_text
from tests.tool_harness import Tools

RULES = "Use tabs for indentation, and never push on Fridays.\n"
MIXED = {
    "utf16_after_a_utf8_mark": codecs.BOM_UTF8 + RULES.encode("utf-16-le"),
    "utf16_be_after_a_utf8_mark": codecs.BOM_UTF8 + RULES.encode("utf-16-be"),
    "nul_characters_after_a_utf16_mark": codecs.BOM_UTF16_LE + RULES.encode("utf-32-le"),
    "binary_after_a_utf8_mark": codecs.BOM_UTF8 + bytes(range(256)) * 4,
}
SKIPPED = "looks like binary data (NUL characters after its"


def _params(expected: str) -> list[object]:
    return [pytest.param(name, marks=case("context", expected)) for name in MIXED]


@pytest.mark.parametrize(
    "mixed", _params("CLAUDE.md: a mark, then no text in its encoding: skipped, one line")
)
def test_claude_md(api_env: FakeAnthropic, project_dir: Path, mixed: str) -> None:
    (project_dir / "CLAUDE.md").write_bytes(MIXED[mixed])
    harness = Harness().start()
    api_env.stream_replies.append(text_reply("ok"))

    harness.turn("hello there")

    system = system_text(main_calls(api_env)[0])
    assert "\x00" not in system and "U\x00s" not in system
    told = [notice.text for notice in harness.of_type(Notice) if notice.level == "warning"]
    assert any(SKIPPED in line for line in told), told


@pytest.mark.parametrize(
    "mixed", _params("read_file: a mark, then no text in its encoding: refused as binary")
)
def test_read_file(project_dir: Path, mixed: str) -> None:
    (project_dir / "rules.txt").write_bytes(MIXED[mixed])

    result = Tools(project_dir).run("read_file", file_path="rules.txt")

    assert result.is_error and "\x00" not in result.content
    assert "binary" in result.content


@case("memory", "a memory whose body is UTF-16 after a UTF-8 mark: never recalled as NUL-interleaved text")
def test_a_memory(api_env: FakeAnthropic, project_dir: Path) -> None:
    folder = project_memory_dir()
    folder.mkdir(parents=True)
    header = memory_text("deploys", "how we deploy", body="").encode()
    (folder / "project_deploys.md").write_bytes(codecs.BOM_UTF8 + header + RULES.encode("utf-16-le"))
    harness = Harness().start()
    api_env.plain_replies.append(choose("project_deploys.md"))
    api_env.responder = hold_replies_until_recall_settles
    api_env.stream_replies.extend([tool_reply("list_files", {"pattern": "*"}), text_reply("No idea.")])

    harness.turn("how do we deploy?")

    assert "\\u0000" not in json.dumps([request.body for request in api_env.requests])
    assert all("\x00" not in reminder for reminder in reminders_in(main_calls(api_env)[1]))
