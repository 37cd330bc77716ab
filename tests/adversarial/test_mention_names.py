"""`@` completion lists only names the terminal gate shows as they are (`untrusted.visible_text`
leaves them unchanged: the one definition). A name holding a blank-drawn filler (U+2800, U+3164,
…), an invisible or bidi character or an escape code is left out, since a menu would show it
blank or reordered and it cannot be typed back; names of spaces, wide characters and emoji are
offered."""

from __future__ import annotations

from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from mini_claude.ui.repl.mention_completion import MentionCompleter
from tests.adversarial.cases import case

HIDDEN = [
    "\u2800",
    "\u3164",
    "\u115f",
    "\uffa0",
    "\u034f",
    "\u17b4",
    "\U0001d159",
    "\u200b",
    "\u202e",
    "\x1b[2J",
]
SHOWN = ["\u00a0", "\u3000", "日本", "😀", "é"]


def _offered(project_dir: Path) -> list[str]:
    found = MentionCompleter(project_dir).get_completions(Document("@"), CompleteEvent(text_inserted=True))
    return [completion.display_text for completion in found]


@pytest.mark.parametrize(
    "char",
    [
        pytest.param(c, marks=case("terminal", "@ completion: a file name holding it is not offered"))
        for c in HIDDEN
    ],
)
def test_a_name_the_gate_would_change_is_not_offered(project_dir: Path, char: str) -> None:
    (project_dir / f"x{char}y.txt").write_text("hidden\n")
    (project_dir / "visible.txt").write_text("v\n")

    assert _offered(project_dir) == ["visible.txt"]


@case("terminal", "@ completion: names of no-break spaces, wide characters and emoji are still offered")
def test_names_the_gate_shows_are_offered(project_dir: Path) -> None:
    for char in SHOWN:
        (project_dir / f"a{char}.txt").write_text("x\n")

    assert sorted(_offered(project_dir)) == sorted(f"a{char}.txt" for char in SHOWN)
