"""Asking a permission question in the REPL: the question laid out (`permission_question.py`),
then one key: `y` yes, `a` always (when offered: the question says what it does — saves a rule
for the command, accepts edits for the conversation, opens a folder for reading), `n` no, `v`
view what the question left out. Esc, Ctrl+C and Ctrl+D are no. Claude Code's menu digits work
too, each always meaning the same: `1` yes, `2` always (only where `a` is offered), `3` no. No key
is taken in the question's first moment (`key_answer.QUESTION_GRACE_S`)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mini_claude.safety.permissions import Answer, PermissionRequest
from mini_claude.ui.questions.key_answer import QUESTION_GRACE_S, read_key_answer
from mini_claude.ui.questions.permission_question import QuestionView, question_view
from mini_claude.ui.questions.preview_rows import VIEW_ALL_KEY

if TYPE_CHECKING:
    from rich.console import Console

YES = {"y": ("y", "yes"), "1": ("y", "yes")}
ALWAYS = {"a": ("a", "always"), "2": ("a", "always")}
NO = {"n": ("n", "no"), "3": ("n", "no")}
VIEW_ALL = {VIEW_ALL_KEY: (VIEW_ALL_KEY, "view all")}
CANCEL = ("n", "no")


def answer_options(request: PermissionRequest) -> str:
    return "[y]es, [n]o" if request.always is None else "[y]es, [a]lways, [n]o"


def ask_permission(request: PermissionRequest, console: Console, *, plain: bool) -> Answer:
    takes_keys_at = time.monotonic() + QUESTION_GRACE_S
    view = show_question(request, console)
    while True:
        keys = {**YES, **(ALWAYS if request.allow_always else {}), **NO}
        options = answer_options(request)
        if view.can_show_more:
            keys |= VIEW_ALL
            options += f", [{VIEW_ALL_KEY}]iew all"
        answer = read_key_answer(
            f"{options}: ", keys, cancel=CANCEL, plain=plain, takes_keys_at=takes_keys_at
        )
        if answer != VIEW_ALL_KEY:
            return answer  # type: ignore[return-value]
        view = show_question(request, console, everything=True)


def show_question(request: PermissionRequest, console: Console, *, everything: bool = False) -> QuestionView:
    from rich.text import Text

    width, height = console.size
    view = question_view(request, width, height, everything=everything)
    rows = Text("\n").join(Text.assemble((row.gutter, "dim"), (row.text, row.style)) for row in view.rows)
    console.print(rows, soft_wrap=True)  # rows fit the width already: no second wrapping
    return view
