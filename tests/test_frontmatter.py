"""Frontmatter parsing, formatting and the read_header fast path."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.frontmatter.codec import (
    MAX_HEADER_BYTES,
    MAX_WARNINGS,
    READ_CHUNK_BYTES,
    Frontmatter,
    fold_value,
    parse,
    read_header,
)
from mini_claude.core.frontmatter.codec import format as format_frontmatter

MEMORY = """---
name: prefers terse answers
description: user wants short replies without preamble
type: feedback
---
Body markdown…
"""
EXPECTED_FIELDS = {
    "name": "prefers terse answers",
    "description": "user wants short replies without preamble",
    "type": "feedback",
}


# --- parse: examples -----------------------------------------------------------------------------


def test_parses_a_plain_memory_file():
    fm = parse(MEMORY)
    assert fm == Frontmatter(EXPECTED_FIELDS, "Body markdown…\n", (), has_block=True)


def test_bom_is_dropped_for_str_and_bytes():
    assert parse("\ufeff" + MEMORY) == parse(MEMORY)
    assert parse(b"\xef\xbb\xbf" + MEMORY.encode()) == parse(MEMORY)


def test_crlf_line_ends_in_the_block_and_verbatim_body():
    fm = parse(MEMORY.replace("\n", "\r\n"))
    assert fm.fields == EXPECTED_FIELDS
    assert fm.body == "Body markdown…\r\n"
    assert fm.warnings == ()


def test_lone_cr_line_ends():
    fm = parse(MEMORY.replace("\n", "\r"))
    assert fm.fields == EXPECTED_FIELDS
    assert fm.body == "Body markdown…\r"


def test_double_quoted_values_with_escapes():
    fm = parse('---\na: "say \\"hi\\" \\\\ \\t\\x41\\u00e9\\U0001F600"\nb: "# not a comment"\n---\n')
    assert fm.fields == {"a": 'say "hi" \\ \tAé😀', "b": "# not a comment"}
    assert fm.warnings == ()


def test_single_quoted_values_double_the_quote():
    fm = parse("---\na: 'it''s: fine'\nb: ''\n---\n")
    assert fm.fields == {"a": "it's: fine", "b": ""}


def test_a_bad_escape_keeps_the_value_as_written_with_a_warning():
    fm = parse('---\npath: "C:\\dir"\n---\n')
    assert fm.fields == {"path": '"C:\\dir"'}
    assert len(fm.warnings) == 1 and "line 2" in fm.warnings[0] and "bad escape" in fm.warnings[0]


def test_unclosed_quote_keeps_the_value_as_written_with_a_warning():
    fm = parse("---\na: \"half open\nb: 'x' trailing\n---\n")
    assert fm.fields == {"a": '"half open', "b": "'x' trailing"}
    assert [w[:6] for w in fm.warnings] == ["line 2", "line 3"]


def test_colons_inside_values_split_at_the_first_colon():
    fm = parse("---\nurl: https://example.com:8080/a\ntime:12:30\n---\n")
    assert fm.fields == {"url": "https://example.com:8080/a", "time": "12:30"}


def test_blank_and_comment_lines_inside_the_block_are_skipped():
    fm = parse("---\n\n# a comment\n   # indented comment\nname: x\n   \n---\nbody")
    assert fm.fields == {"name": "x"}
    assert fm.warnings == ()


def test_surrounding_whitespace_is_tolerated():
    fm = parse("\n  \n  ---  \n  Name  :   spaced value \t \n\t---\t\nbody")
    assert fm == Frontmatter({"name": "spaced value"}, "body", (), has_block=True)


def test_keys_are_lowercased():
    assert parse("---\nType: user\n---\n").fields == {"type": "user"}


def test_missing_closing_fence_means_no_frontmatter_and_a_warning():
    text = "---\nname: x\nbody without a closing fence\n"
    fm = parse(text)
    assert fm.has_block is False
    assert fm.fields == {}
    assert fm.body == text
    assert len(fm.warnings) == 1 and "never closed" in fm.warnings[0]


def test_text_without_frontmatter_is_all_body_without_warnings():
    text = "# Title\n---\nname: x\n---\n"
    assert parse(text) == Frontmatter({}, text, (), has_block=False)


def test_empty_file():
    assert parse("") == Frontmatter()
    assert parse(b"") == Frontmatter()
    assert parse("\ufeff") == Frontmatter()


def test_non_utf8_bytes_are_replaced_and_reported():
    fm = parse(b"---\nname: caf\xe9\n---\nbody \xff")
    assert fm.fields == {"name": "caf\ufffd"}
    assert fm.body == "body \ufffd"
    assert len(fm.warnings) == 1 and "UTF-8" in fm.warnings[0] and "offset 13" in fm.warnings[0]


def test_duplicate_keys_first_wins_with_a_warning():
    fm = parse("---\nname: first\nNAME: second\n---\n")
    assert fm.fields == {"name": "first"}
    assert len(fm.warnings) == 1
    assert "line 3" in fm.warnings[0] and "line 2" in fm.warnings[0]


def test_junk_lines_are_skipped_with_their_line_number():
    fm = parse("---\nname: x\njust some words\nbad key: y\n- item\n---\n")
    assert fm.fields == {"name": "x"}
    assert [w.split(":")[0] for w in fm.warnings] == ["line 3", "line 4", "line 5"]


def test_warnings_are_capped():
    fm = parse("---\n" + "junk\n" * 100 + "---\n")
    assert len(fm.warnings) == MAX_WARNINGS
    assert "81 more" in fm.warnings[-1]


def test_body_starting_with_a_fence_round_trips():
    text = format_frontmatter({"name": "x"}, "---\nnot: frontmatter\n---\n")
    fm = parse(text)
    assert fm.fields == {"name": "x"}
    assert fm.body == "---\nnot: frontmatter\n---\n"


def test_parse_accepts_any_str_or_bytes_like():
    class Text(str):
        pass

    assert parse(Text(MEMORY)) == parse(MEMORY)
    assert parse(bytearray(MEMORY.encode())) == parse(MEMORY)
    assert parse(memoryview(MEMORY.encode())) == parse(MEMORY)


# --- format: examples ----------------------------------------------------------------------------


def test_format_writes_a_canonical_block():
    assert format_frontmatter(EXPECTED_FIELDS, "Body markdown…\n") == MEMORY


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("", '""'),
        ('"quoted"', '"\\"quoted\\""'),
        ("'single'", "\"'single'\""),
        ("#hash", '"#hash"'),
        ("a: b", '"a: b"'),
        ("ends:", '"ends:"'),
        ("a #b", '"a #b"'),
        ("a#b", "a#b"),
        ("a\tb", '"a\\tb"'),
        ("bell\x07", '"bell\\u0007"'),
        ("bidi\u202e", '"bidi\\u202e"'),
        ("line one\n  line two ", "line one line two"),
        ("  padded  ", "padded"),
        ("plain, with 'quotes' inside", "plain, with 'quotes' inside"),
    ],
)
def test_format_quotes_only_when_needed(value, written):
    assert format_frontmatter({"k": value}, "") == f"---\nk: {written}\n---\n"


def test_quoted_values_are_json_strings():
    value = 'a "quote", a \\ backslash: \x1b and \u202e hidden, é and 😀 shown'
    written = format_frontmatter({"k": value}, "").splitlines()[1].removeprefix("k: ")
    assert json.loads(written) == value
    assert written.isprintable() and "é" in written and "😀" in written


@pytest.mark.parametrize("key", ["", "has space", "colon:", "é", "new\nline"])
def test_format_rejects_invalid_keys(key):
    with pytest.raises(ValueError):
        format_frontmatter({key: "v"}, "")


def test_format_rejects_keys_that_collide_ignoring_case():
    with pytest.raises(ValueError):
        format_frontmatter({"Name": "a", "name": "b"}, "")


def test_format_with_no_fields_still_writes_a_block():
    assert format_frontmatter({}, "---\n") == "---\n---\n---\n"
    assert parse("---\n---\n---\n") == Frontmatter({}, "---\n", (), has_block=True)


def test_fold_value():
    assert fold_value("a\r\nb\u2028c\x85d\n\n e") == "a b c d e"
    assert fold_value("  keep  inner  spaces \n") == "keep  inner  spaces"
    assert fold_value("") == ""


# --- read_header ---------------------------------------------------------------------------------


def test_read_header_returns_fields_and_an_empty_body(tmp_path):
    path = tmp_path / "m.md"
    path.write_text(MEMORY)
    assert read_header(path) == Frontmatter(EXPECTED_FIELDS, "", (), has_block=True)


def test_read_header_handles_bom_crlf_and_bad_bytes(tmp_path):
    path = tmp_path / "m.md"
    path.write_bytes(b"\xef\xbb\xbf---\r\nname: caf\xe9\r\n---\r\nbody")
    fm = read_header(path)
    assert fm.fields == {"name": "caf\ufffd"}
    assert fm.has_block and fm.body == ""
    assert len(fm.warnings) == 1 and "UTF-8" in fm.warnings[0]


def test_read_header_reads_only_the_header(tmp_path, monkeypatch):
    path = tmp_path / "big.md"
    path.write_text(MEMORY + "x" * 1_000_000)
    real_read = os.read
    reads: list[int] = []

    def counting_read(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        reads.append(len(data))
        return data

    monkeypatch.setattr(frontmatter.os, "read", counting_read)
    assert read_header(path).fields == EXPECTED_FIELDS
    assert reads == [READ_CHUNK_BYTES]


def test_read_header_header_spanning_several_chunks(tmp_path):
    fields = {f"k{i}": "v" * 50 for i in range(100)}  # ~5.6 KB: three chunks
    path = tmp_path / "m.md"
    path.write_text(format_frontmatter(fields, "body"))
    fm = read_header(path)
    assert fm.fields == fields and fm.warnings == ()


def test_read_header_gives_up_after_the_cap(tmp_path):
    path = tmp_path / "m.md"
    path.write_text("---\n" + "k: v\n" * 10_000 + "---\n")
    fm = read_header(path)
    assert fm.has_block is False and fm.fields == {}
    assert len(fm.warnings) == 1 and str(MAX_HEADER_BYTES) in fm.warnings[0]
    assert (
        read_header(path, max_bytes=100).warnings[0].startswith("frontmatter not closed within the first 100")
    )


def test_read_header_without_frontmatter_or_closing_fence(tmp_path):
    plain = tmp_path / "plain.md"
    plain.write_text("# just markdown\n")
    assert read_header(plain) == Frontmatter()
    unclosed = tmp_path / "unclosed.md"
    unclosed.write_text("---\nname: x\n")
    fm = read_header(unclosed)
    assert fm.has_block is False and "never closed" in fm.warnings[0]
    empty = tmp_path / "empty.md"
    empty.write_bytes(b"")
    assert read_header(empty) == Frontmatter()


def test_read_header_io_errors_become_warnings(tmp_path):
    for path in (tmp_path / "missing.md", tmp_path, "bad\0path"):
        fm = read_header(path)
        assert fm.has_block is False and fm.fields == {}
        assert len(fm.warnings) == 1 and fm.warnings[0].startswith("cannot read the file")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read anything")
def test_read_header_permission_denied_becomes_a_warning(tmp_path):
    path = tmp_path / "secret.md"
    path.write_text(MEMORY)
    path.chmod(0)
    fm = read_header(path)
    assert fm.has_block is False and fm.warnings[0].startswith("cannot read the file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_read_header_does_not_hang_on_a_fifo(tmp_path):
    path = tmp_path / "pipe.md"
    os.mkfifo(path)
    results: list[Frontmatter] = []
    reader = threading.Thread(target=lambda: results.append(read_header(path)), daemon=True)
    reader.start()
    reader.join(timeout=5)
    assert results == [Frontmatter()]


# --- properties ----------------------------------------------------------------------------------

KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
keys = st.text(KEY_ALPHABET, min_size=1, max_size=12)
# Bias values towards the characters that need care: quotes, escapes, colons, hashes, line breaks,
# controls, invisible and non-BMP characters; plus arbitrary text (surrogates included).
tricky_chars = st.sampled_from(list("\"'\\:# -\t\n\r\v\f\x00\x1c\x85\u2028\u2029\ufeff\u200b\xa0é😀"))
values = st.one_of(
    st.text(max_size=30),
    st.text(st.one_of(tricky_chars, st.characters()), max_size=30),
)
fields_strategy = st.dictionaries(keys, values, max_size=6).filter(
    lambda d: len({k.lower() for k in d}) == len(d)
)
bodies = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(["---", "\n", "\r\n", "\r", "name: x", " ", "\ufeff"]), max_size=8).map("".join),
)
# Byte soup built from the pieces that matter, so the fuzzing regularly produces real blocks.
byte_pieces = st.one_of(
    st.sampled_from(
        [b"---", b"\n", b"\r\n", b"\r", b"\xef\xbb\xbf", b"name: x", b"a:", b'"', b"'", b"\\", b"#", b" "]
    ),
    st.binary(max_size=6),
)
byte_docs = st.lists(byte_pieces, max_size=20).map(b"".join)

FAST = settings(max_examples=300, deadline=None)


@FAST
@given(st.text())
def test_parse_never_raises_on_text(text):
    fm = parse(text)
    assert all(fold_value(v) == v for v in fm.fields.values())


# Raw bytes only, as many as the half of 300 they used to be: the byte soup that forms real blocks
# is parsed 300 times below, where read_header is compared with parse.
@settings(max_examples=150, deadline=None)
@given(st.binary())
def test_parse_never_raises_on_bytes(data):
    fm = parse(data)
    assert fm.has_block or fm.fields == {}


@FAST
@given(st.lists(st.sampled_from(["---", "\n", "\r", "k: v", '"', "\\", "#", ":"]), max_size=20).map("".join))
def test_parse_never_raises_on_structured_text(text):
    parse(text)


@pytest.fixture(scope="module")
def scratch_file():
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp) / "memory.md"


# One test for both readers of a written file: drawing the examples is most of the cost, and
# read_header now sees all 400 of them.
@settings(max_examples=400, deadline=None)
@given(fields=fields_strategy, body=bodies)
def test_format_then_parse_round_trips_and_read_header_agrees(scratch_file, fields, body):
    text = format_frontmatter(fields, body)
    fm = parse(text)
    assert fm.fields == {k.lower(): fold_value(v) for k, v in fields.items()}
    assert fm.body == body
    assert fm.warnings == ()
    assert fm.has_block

    # surrogatepass: a lone surrogate can only be in the body (format escapes them in values)
    scratch_file.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    header = read_header(scratch_file)
    assert header.fields == fm.fields
    assert header.has_block and header.body == ""


@settings(max_examples=300, deadline=None)
@given(data=byte_docs, chunk=st.integers(1, 8))
def test_read_header_agrees_with_parse_on_arbitrary_bytes(scratch_file, data, chunk):
    scratch_file.write_bytes(data)
    with patch.object(frontmatter, "READ_CHUNK_BYTES", chunk):  # tiny chunks: lines cross chunk ends
        header = read_header(scratch_file)
    whole = parse(data)
    assert whole.has_block or whole.fields == {}
    assert (header.fields, header.has_block) == (whole.fields, whole.has_block)
