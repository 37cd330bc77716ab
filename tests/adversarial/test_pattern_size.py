"""A grep pattern's size is bounded before `regex` compiles it, and the bound never reads the
pattern smaller than `regex` does: a repeat hidden from the estimate by what looks like a class
(`(?#[)` … `(?#])`, a verbose `#[` comment, a POSIX class, a nested set) is compiled unseen and
takes seconds and gigabytes. The oracle here is `regex`'s own parser (its parse tree, before any
compiling), the estimate `tools/patterns.py:unrolled_size`."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from regex import _regex_core as core

from mini_claude.tools.patterns import MAX_PATTERN_SIZE, turns_on_verbose, unrolled_size
from tests.adversarial.cases import case
from tests.kit import must_finish_within
from tests.tool_harness import Tools

BIG = "(((a{100}){100}){100}){4}"  # 4,000,000 nodes unrolled: 19 s and 2.2 GB to compile


def parsed_size(pattern: str) -> int | None:
    """The nodes of `pattern` as `regex` parses it, every counted repeat unrolled; None when it
    does not parse."""
    flags = 0
    while True:
        source = core.Source(pattern)
        info = core.Info(flags, source.char_type, {})
        source.ignore_space = bool(info.flags & core.VERBOSE)
        try:
            tree = core._parse_pattern(source, info)
        except core._UnscopedFlagSet:  # a global flag later on: parsed again, as regex does
            flags = info.global_flags
            continue
        except (core.error, RecursionError, ValueError, OverflowError, KeyError):
            return None
        return _tree_size(tree) if source.at_end() else None


def _tree_size(node: object) -> int:
    if isinstance(node, core.GreedyRepeat):  # lazy and possessive ones too
        return _tree_size(node.subpattern) * max(node.min_count, node.max_count or 0, 1)
    if isinstance(node, core.String):
        return len(node.characters)
    if isinstance(node, core.SetBase):
        return 1
    children = [getattr(node, name) for name in ("subpattern", "yes_item", "no_item") if hasattr(node, name)]
    children += list(getattr(node, "items", ())) + list(getattr(node, "branches", ()))
    if not any(hasattr(node, name) for name in ("subpattern", "items", "branches", "yes_item")):
        return 1  # a leaf: a character, a property, an anchor
    return sum(_tree_size(child) for child in children if child is not None)


HIDING = [
    ("inline_comment", "(?#[)" + BIG + "(?#])"),
    ("escaped_paren_in_comment", r"(?#\)[)" + BIG + "(?#])"),
    ("verbose_comment", "(?x)#[\n" + BIG + "\n]"),
    ("scoped_verbose", "(?x:#[\n)" + BIG + "]"),
    ("verbose_among_flags", "(?ix)#[\n" + BIG + "\n]"),
    ("posix_class", "(x[[:alpha:])]" + "{100}" * 3 + ")"),
    ("nested_set", "(?V1)(x[[a])]{1000}){1000}"),
    ("repeat_after_comment", "((a{100}){100})(?#x){100}"),
]


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param(
            p, marks=case("crashes", "a repeat hidden by what looks like a class: refused at once"), id=n
        )
        for n, p in HIDING
    ],
)
def test_a_hidden_repeat_is_refused_before_compiling(tools_dir: Path, pattern: str) -> None:
    tools = Tools(tools_dir, "ask")
    (tools_dir / "a.txt").write_text("hello\n")

    with must_finish_within(5):
        result = tools.run("grep_search", pattern=pattern)

    assert result.is_error and ("repeats too much" in result.content or "verbose mode" in result.content)
    assert "internal error" not in result.content


@case("crashes", "a comment or POSIX class in an ordinary pattern does not stop it being searched")
def test_ordinary_comments_and_posix_classes_still_search(tools_dir: Path) -> None:
    tools = Tools(tools_dir, "ask")
    (tools_dir / "a.txt").write_text("commit 0123456789 [x]\n")

    result = tools.run("grep_search", pattern=r"(?#the id)[[:digit:]]{10} \[(?#a bracket)[[:alpha:]]\]")

    assert result.content == "a.txt:1:commit 0123456789 [x]", result.content


# --- the estimate, for any pattern regex parses -------------------------------------------------------

# Pieces that mislead a reader that does not parse as regex does: brackets, parens and counts
# inside comments and classes, escapes, POSIX classes, nested sets and set operations.
_pieces = st.sampled_from(
    ["a", "[", "]", "(", ")", "{30}", "{2,40}", "\\", "\\)", "\\]", "#", "\n", ":", "-", "^"]
)
_comment = st.lists(_pieces, max_size=6).map(lambda p: "(?#" + "".join(p).replace(")", "\\)") + ")")
_class = st.lists(
    st.sampled_from(["a", "(", ")", "{30}", "\\]", "[:alpha:]", "[a]", "--", "#", "^", ":"]), max_size=4
).map(lambda p: "[" + "".join(p) + "]")
_atom = st.one_of(
    st.sampled_from(["a", "\\(", "\\[", "#", " ", "\\p{L}", "\\N{BULLET}", "."]), _comment, _class
)


def _node(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.lists(children, min_size=1, max_size=4).map("".join),
        children.map(lambda c: f"({c})"),
        children.map(lambda c: f"(?:{c})"),
        st.tuples(children, children).map("|".join),
        st.tuples(children, st.sampled_from(["{30}", "{2,40}", "{,25}", "{40,}", "*", "+", "{30}?"])).map(
            "".join
        ),
        st.tuples(children, _comment, st.sampled_from(["{30}", "{40}"])).map("".join),
    )


patterns = st.tuples(st.sampled_from(["", "(?V1)", "(?i)"]), st.recursive(_atom, _node, max_leaves=12)).map(
    "".join
)


@case("crashes", "any pattern regex parses: the estimate of its unrolled size is never smaller than regex's")
@settings(max_examples=400, deadline=None)
@given(pattern=patterns)
@example(pattern="(?#[)" + BIG + "(?#])")
@example(pattern="(x[[:alpha:])]{30}{30}{30})")
@example(pattern="(?V1)(x[[a])]{30}){30}{30}")
@example(pattern="(?V1)[a--](?#]aaa\\)")  # a `]` after a set operator is literal
def test_the_estimate_never_reads_a_pattern_smaller(pattern: str) -> None:
    size = parsed_size(pattern)
    assume(size is not None and not turns_on_verbose(pattern))
    assert unrolled_size(pattern) >= min(size, MAX_PATTERN_SIZE + 1)


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    return tmp_path
