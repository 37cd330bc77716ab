"""Which texts are worth a recall, and when a recall made on a draft (the message still being
typed) stands for the message the user then sends.

The rule for a draft: its recall's memories go into the message's first request when the sent
text starts with the draft (compared after folding case and spaces) and the draft holds at least
DRAFT_MIN_SHARE of it. When the sent text adds little to the draft (at most DRAFT_SLIGHT_WORDS
words and DRAFT_SLIGHT_SHARE of its length), that is all; otherwise a recall for the whole text
runs too, and what it adds arrives by the usual poll.
"""

from __future__ import annotations

import re

from mini_claude.memory.secrets import find_secret

MIN_CJK_CHARS_FOR_ONE_WORD = 2
DRAFT_MIN_WORDS = 3  # "at least a few words" before a draft is worth a side query
DRAFT_MIN_CJK_CHARS = 2
DRAFT_MIN_NEW_WORDS = 2  # a draft is recalled again only once it has grown by this much
DRAFT_MIN_SHARE = 0.5
DRAFT_SLIGHT_WORDS = 3
DRAFT_SLIGHT_SHARE = 0.25
# Inputs that are not messages for the model: commands, and the shell / memory shortcuts.
NOT_A_MESSAGE_PREFIXES = ("/", "!", "#")

_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff]")


def cjk_chars(text: str) -> int:
    return len(_CJK.findall(text))


def is_single_word(text: str) -> bool:
    """No whitespace and fewer than two CJK characters: too little to recall anything by."""
    stripped = text.strip()
    if any(ch.isspace() for ch in stripped):
        return False
    return cjk_chars(stripped) < MIN_CJK_CHARS_FOR_ONE_WORD


def worth_a_draft_recall(draft: str) -> bool:
    """A draft is sent to the side model only when it could be a message (not a command or a
    shortcut), holds a few words (or two CJK characters), and looks like no secret: the user may
    yet delete what they typed, so nothing that could be a credential leaves while typing."""
    text = draft.strip()
    if not text or text.startswith(NOT_A_MESSAGE_PREFIXES):
        return False
    if len(text.split()) < DRAFT_MIN_WORDS and cjk_chars(text) < DRAFT_MIN_CJK_CHARS:
        return False
    return find_secret(text) is None


def grown_enough(recalled: str, draft: str) -> bool:
    """Whether `draft` is worth another recall after one was made on `recalled`."""
    old, new = _folded(recalled), _folded(draft)
    if old == new:
        return False
    if not new.startswith(old):
        return True  # edited, not only extended: what it is about may have changed
    added = new[len(old) :]
    return len(added.split()) >= DRAFT_MIN_NEW_WORDS or cjk_chars(added) >= DRAFT_MIN_CJK_CHARS


def draft_covers(draft: str, sent: str) -> bool:
    """The draft's recall may stand for the sent message (see the module's docstring)."""
    old, new = _folded(draft), _folded(sent)
    return bool(old) and new.startswith(old) and len(old) >= DRAFT_MIN_SHARE * len(new)


def adds_little(draft: str, sent: str) -> bool:
    """The sent message is the draft or a slight extension of it: no recall of its own needed."""
    old, new = _folded(draft), _folded(sent)
    added = new[len(old) :]
    return (
        new.startswith(old)
        and len(added.split()) <= DRAFT_SLIGHT_WORDS
        and len(added) <= DRAFT_SLIGHT_SHARE * len(new)
    )


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())
