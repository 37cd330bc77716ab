"""A file read as text into a prompt or a tool result honours its byte order mark; text that is
not UTF-8 is decoded with a warning, or skipped with one when it looks binary, never sent as
NUL-interleaved garbage. The places: CLAUDE.md, memory files (index, recall, `memory show`),
`@file` attachments and read_file. The one decoder is `core/files/text_decoding.py`."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from mini_claude.app.instructions.reading import INSTRUCTION_FILE_MAX_BYTES as PROJECT_INSTRUCTIONS_MAX_BYTES
from mini_claude.app.mentions import attach, find_mentions
from mini_claude.core.config import project_memory_dir
from mini_claude.core.events import Notice
from mini_claude.tools import file_kinds
from tests.adversarial.cases import case
from tests.agent_harness import Harness, hold_replies_until_recall_settles
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, text_reply, tool_reply
from tests.kit import choose, main_calls, memory_text, reminders_in, system_text, user_texts
from tests.tool_harness import Tools

RULES = "Use tabs. Café au lait ✓ 日本語 \U0001f680\nNever push on Fridays.\n"
# Each way of writing RULES that must reach the model as RULES: its bytes, and the warning it
# earns (None: a BOM said it all).
ENCODED = {
    "utf8_bom": (codecs.BOM_UTF8 + RULES.encode(), None),
    "utf16_le_bom": (RULES.encode("utf-16"), None),  # Python writes the LE mark first
    "utf16_be_bom": (codecs.BOM_UTF16_BE + RULES.encode("utf-16-be"), None),
    "utf32_le_bom": (RULES.encode("utf-32"), None),
    "utf32_be_bom": (codecs.BOM_UTF32_BE + RULES.encode("utf-32-be"), None),
    "utf16_le_no_bom": (RULES.encode("utf-16-le"), "no byte order mark: read as UTF-16 LE"),
    "utf16_be_no_bom": (RULES.encode("utf-16-be"), "no byte order mark: read as UTF-16 BE"),
}
LATIN1 = "Café rules: naïve résumé\n".encode("latin-1")
BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8


def one_message(api_env: FakeAnthropic) -> tuple[Harness, str]:
    harness = Harness().start()
    api_env.stream_replies.append(text_reply("Answered."))
    harness.turn("hello there")
    return harness, system_text(main_calls(api_env)[0])


def warnings_of(harness: Harness) -> list[str]:
    return [notice.text for notice in harness.of_type(Notice) if notice.level == "warning"]


# --- CLAUDE.md ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "encoding",
    [
        pytest.param(
            name,
            marks=case("context", "CLAUDE.md by its BOM, or UTF-16 told by its zero bytes: read as written"),
        )
        for name in ENCODED
    ],
)
def test_claude_md_in_another_encoding(api_env: FakeAnthropic, project_dir: Path, encoding: str) -> None:
    data, warning = ENCODED[encoding]
    (project_dir / "CLAUDE.md").write_bytes(data)

    harness, system = one_message(api_env)

    assert RULES.strip() in system and "\x00" not in system and "\ufeff" not in system
    told = warnings_of(harness)
    assert told == ([] if warning is None else [f"{project_dir.resolve() / 'CLAUDE.md'}: {warning}"])


@case("context", "CLAUDE.md in Latin-1: sent with U+FFFD where its bytes are not UTF-8, and one warning")
def test_claude_md_in_latin1(api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_dir / "CLAUDE.md").write_bytes(LATIN1)

    harness, system = one_message(api_env)

    assert "Caf\ufffd rules: na\ufffdve r\ufffdsum\ufffd" in system
    [warning] = warnings_of(harness)
    assert "CLAUDE.md: not valid UTF-8: shown with U+FFFD in 4 places (the first at byte offset 3)" in warning


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(BINARY, id="png"),
        pytest.param(b"Use tabs\x00\x00\x07\x00\x13garbage" * 20, id="nul_bytes"),
        pytest.param(bytes(range(128, 256)) * 30, id="mostly_not_utf8"),
        pytest.param("Use tabs.\n".encode("utf-32-le"), id="utf32_without_bom"),
    ],
)
@case(
    "context", "CLAUDE.md that looks binary (NULs, mostly not UTF-8, BOM-less UTF-32): skipped, one warning"
)
def test_binary_claude_md_is_skipped(api_env: FakeAnthropic, project_dir: Path, data: bytes) -> None:
    (project_dir / "CLAUDE.md").write_bytes(data)

    harness, system = one_message(api_env)

    assert "<project-instructions" not in system and "\x00" not in system
    [warning] = warnings_of(harness)
    assert "CLAUDE.md not read:" in warning and "looks like binary data" in warning


@case("context", "a UTF-16 CLAUDE.md over the 40 KB cap: cut between characters (an emoji's pair kept whole)")
def test_a_long_utf16_claude_md_is_cut_between_characters(api_env: FakeAnthropic, project_dir: Path) -> None:
    text = "\U0001f680 rocket rules.\n" * (PROJECT_INSTRUCTIONS_MAX_BYTES // 10)
    (project_dir / "CLAUDE.md").write_bytes(text.encode("utf-16"))

    harness, system = one_message(api_env)

    instructions = system.split("<project-instructions")[1].split("</project-instructions>")[0]
    assert "\ufffd" not in instructions and "\x00" not in instructions
    assert instructions.count("\U0001f680 rocket rules.") > 1000
    assert "only its first 40 KB are used" in warnings_of(harness)[0]


# --- memory files ---------------------------------------------------------------------------------


@pytest.fixture
def memory_dir(project_dir: Path) -> Path:
    folder = project_memory_dir(str(project_dir))
    folder.mkdir(parents=True)
    return folder


@case(
    "memory",
    "a memory in UTF-16 (BOM): indexed by its name, recalled and shown as its text, no NUL anywhere",
)
def test_a_utf16_memory_is_read_as_text(api_env: FakeAnthropic, project_dir: Path, memory_dir: Path) -> None:
    text = memory_text("café deploys", "how we deploy ✓", body="Thursdays, after the 🚀 standup.\n")
    (memory_dir / "project_deploys.md").write_bytes(text.encode("utf-16"))
    harness = Harness().start()
    api_env.plain_replies.append(choose("project_deploys.md"))
    api_env.responder = hold_replies_until_recall_settles
    api_env.stream_replies.extend([tool_reply("list_files", {"pattern": "*"}), text_reply("On Thursdays.")])

    harness.turn("how do we deploy?")
    shown = Cli(project_dir).run("memory", "show", "café deploys")

    calls = main_calls(api_env)
    assert "café deploys" in system_text(calls[0]) and "how we deploy ✓" in system_text(calls[0])
    [reminder] = reminders_in(calls[1])
    assert "Thursdays, after the 🚀 standup." in reminder and "\x00" not in reminder
    assert shown.returncode == 0 and "Thursdays, after the 🚀 standup." in shown.stdout
    assert "\\x00" not in shown.stdout


@case("memory", "a Latin-1 memory: `memory show` has U+FFFD and says why; the listing warns; no crash")
def test_a_latin1_memory_is_shown_with_a_warning(project_dir: Path, memory_dir: Path) -> None:
    (memory_dir / "user_cafe.md").write_bytes(
        memory_text("cafe", "où we meet", body="Le café.\n").encode("latin-1")
    )
    cli = Cli(project_dir)

    shown = cli.run("memory", "show", "cafe")
    listing = cli.run("memory", "list")

    assert (
        "Le caf\ufffd." in shown.stdout and "[not valid UTF-8: shown with U+FFFD in 2 places" in shown.stdout
    )
    assert "(warning: not valid UTF-8" in listing.stdout


@case("memory", "a memory that looks binary: never recalled into the prompt, `memory show` says why")
def test_a_binary_memory_is_not_read(api_env: FakeAnthropic, project_dir: Path, memory_dir: Path) -> None:
    header = memory_text("deploys", "how we deploy", body="").encode()
    (memory_dir / "project_deploys.md").write_bytes(header + BINARY)
    harness = Harness().start()
    api_env.plain_replies.append(choose("project_deploys.md"))
    api_env.responder = hold_replies_until_recall_settles
    api_env.stream_replies.extend([tool_reply("list_files", {"pattern": "*"}), text_reply("No idea.")])

    harness.turn("how do we deploy?")
    shown = Cli(project_dir).run("memory", "show", "deploys")

    assert reminders_in(main_calls(api_env)[1]) == []
    assert "IHDR" not in str([request.body for request in api_env.requests])
    assert shown.returncode == 1 and "looks like binary data" in shown.stderr


# --- read_file and @file ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "encoding",
    [
        pytest.param(
            name, marks=case("context", "read_file of UTF-16/32 (BOM or not): numbered text, says it decoded")
        )
        for name in ENCODED
    ],
)
def test_read_file_decodes_by_the_bom(project_dir: Path, encoding: str) -> None:
    data, _ = ENCODED[encoding]
    (project_dir / "rules.txt").write_bytes(data)

    result = Tools(project_dir).run("read_file", file_path="rules.txt")

    assert not result.is_error, result.content
    assert result.content.startswith("     1\tUse tabs. Café au lait ✓ 日本語 \U0001f680\n     2\tNever push")
    assert "\x00" not in result.content and "\ufeff" not in result.content
    if encoding != "utf8_bom":
        name = encoding.split("_bom")[0].split("_no")[0].upper().replace("UTF", "UTF-").replace("_", " ")
        assert f"[the file is {name} text, decoded for you" in result.content
        assert result.summary == f"2 lines, {name}"


@case(
    "context",
    "read_file of Latin-1 text: U+FFFD, and a note saying which lines hold bytes that are not UTF-8",
)
def test_read_file_of_latin1_says_so(project_dir: Path) -> None:
    (project_dir / "old.txt").write_bytes(b"fine line\n" + LATIN1 + b"another fine line\n")

    result = Tools(project_dir).run("read_file", file_path="old.txt")

    assert "     2\tCaf\ufffd rules" in result.content
    note = "[bytes that are not UTF-8 in 1 line above, shown as U+FFFD; edit_file keeps them as they are]"
    assert result.content.endswith(note)
    assert result.summary == "3 lines, not all UTF-8"


@case("context", "read_file of a UTF-16 file over its decode cap: refused with how to convert it")
def test_read_file_of_a_huge_utf16_file(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_kinds, "MAX_WIDE_TEXT_BYTES", 1000)
    (project_dir / "big.txt").write_bytes(("line\n" * 1000).encode("utf-16"))

    result = Tools(project_dir).run("read_file", file_path="big.txt")

    assert result.is_error and "UTF-16 LE text over" in result.content and "iconv" in result.content


@case("context", "an @file in UTF-16: attached as its text, the user told it was UTF-16")
def test_an_attached_utf16_file(api_env: FakeAnthropic, project_dir: Path) -> None:
    (project_dir / "rules.txt").write_bytes(RULES.encode("utf-16"))
    harness = Harness().start()
    agent = harness.session.agent

    attached = attach(find_mentions("see @rules.txt", project_dir), agent)
    agent.add_context(attached.blocks)
    api_env.stream_replies.append(text_reply("ok"))
    harness.turn("see @rules.txt")

    assert attached.shown == ["@rules.txt (2 lines, UTF-16 LE)"]
    [block] = [text for text in user_texts(main_calls(api_env)[0]) if "<attached-file" in text]
    assert "Never push on Fridays." in block and "\x00" not in block


@case(
    "context",
    "edit_file on a UTF-16 file: refused with what to do, the file untouched (never rewritten as garbage)",
)
def test_edit_file_of_utf16_is_refused_clearly(project_dir: Path) -> None:
    data = RULES.encode("utf-16")
    (project_dir / "rules.txt").write_bytes(data)

    result = Tools(project_dir, "bypass").run(
        "edit_file", file_path="rules.txt", old_string="Use tabs.", new_string="Use spaces."
    )

    assert result.is_error and "is UTF-16 LE text; edit_file edits UTF-8 files only" in result.content
    assert (project_dir / "rules.txt").read_bytes() == data


@case(
    "memory",
    "the model saving a memory whose body holds a NUL: refused with why (it would read back as binary)",
)
def test_a_memory_with_a_nul_is_not_saved(project_dir: Path) -> None:
    tools = Tools(project_dir)
    content = memory_text("deploys", "how we deploy", body="Thursdays.\x00\n")

    result = tools.run("write_file", file_path=str(tools.memory_dir / "project_deploys.md"), content=content)

    assert result.is_error and "NUL character" in result.content
    assert not (tools.memory_dir / "project_deploys.md").exists()
