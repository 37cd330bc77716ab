"""The target's lines read from either end agree: the question's head rows come from the front,
its tail rows from the back, and both must see the same lines and the same runs of blank lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_claude.ui.questions.target_lines import BlankLines, TargetLine, TargetText

lines = st.lists(
    st.one_of(
        st.sampled_from(["", " ", "\t", "\u00a0", "\u3000\u200b", "\x1b"]), st.text("ab \u00a0", max_size=5)
    ),
    max_size=30,
)


# 100, not 300: the lines come from a handful of blanks and short words, and planted slips in
# backward() (off by one at a run's ends, a line with ink taken for blank, a wrong count) were
# caught as often at 100 examples as at 300; drawing them was nine tenths of the cost.
@settings(max_examples=100, deadline=None)
@given(lines=lines, final_break=st.booleans(), slice_chars=st.sampled_from([None, 1, 3]))
def test_read_backward_is_read_forward_reversed(
    lines: list[str], final_break: bool, slice_chars: int | None
) -> None:
    target = TargetText("\n".join(lines) + ("\n" if final_break else ""))
    target.slice_chars = slice_chars
    forward = list(target.forward())
    assert list(target.backward()) == forward[::-1]
    # Every line is in exactly one item, in order.
    numbers = [n for item in forward for n in range(item.first, item.last + 1)]
    assert numbers == list(range(1, target.count + 1))


def test_blank_lines_are_any_characters_drawn_as_nothing() -> None:
    target = TargetText("ls\n\u00a0\n \t\n\u3000\u200b\n\x1b\ncurl x\n\n")
    assert list(target.forward()) == [
        TargetLine(1, "ls"),
        BlankLines(2, 5, "\u00a0 \t\u3000\u200b\x1b"),
        TargetLine(6, "curl x"),
        TargetLine(7, ""),
    ]
    assert BlankLines(2, 5, "\u00a0 \t\u3000").note == "(4 blank lines: \\xa0 space tab \\u3000)"
    assert BlankLines(1, 40, " \t").note == "(40 blank lines)"


def test_a_long_line_is_laid_out_by_its_ends() -> None:
    target = TargetText("a" * 10 + "b" * 5 + "c" * 10)
    target.slice_chars = 10
    assert list(target.forward()) == [TargetLine(1, "a" * 10, 5, "c" * 10)]
