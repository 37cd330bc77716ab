"""Which texts are worth a recall, and when a recall made on a draft (the message still being
typed) stands for the message the user then sends.

The rule for a draft: its recall's memories go into the message's first request when the sent
text starts with the draft (compared after folding case and spaces) and the draft holds at least
DRAFT_MIN_SHARE of it. When the sent text adds no new search term to the draft (see terms.py: a
word that is no stopword, or a pair of CJK characters; punctuation and stopwords do not count),
that is all; otherwise a recall for the whole text runs too, and what it adds arrives by the usual
poll. So "how do we" + " deploy?" gets a recall of its own: the word that matters may come last.
"""

from __future__ import annotations

import math
import re

from mini_claude.memory.recall.terms import terms
from mini_claude.safety.secrets.check import find_secret

MIN_CJK_CHARS_FOR_ONE_WORD = 2
DRAFT_MIN_WORDS = 3  # "at least a few words" before a draft is worth a side query
DRAFT_MIN_CJK_CHARS = 2
# A draft is recalled again only once its search terms changed by this many, and by this share of
# the last recalled draft's: a pause every few words of a long message costs a few side queries
# (their number grows with the log of its length), not one per pause.
DRAFT_MIN_CHANGED_TERMS = 2
DRAFT_CHANGED_SHARE = 0.5
DRAFT_MIN_SHARE = 0.5
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
    shortcut), holds a few words (or two CJK characters) with a search term among them ("how do
    we" names nothing to recall), and looks like no secret: the user may yet delete what they
    typed, so nothing that could be a credential leaves while typing."""
    text = draft.strip()
    if not text or text.startswith(NOT_A_MESSAGE_PREFIXES):
        return False
    if len(text.split()) < DRAFT_MIN_WORDS and cjk_chars(text) < DRAFT_MIN_CJK_CHARS:
        return False
    return bool(terms(text)) and find_secret(text) is None


def grown_enough(recalled: str, draft: str) -> bool:
    """Whether `draft` is worth another recall after one was made on `recalled`: its search terms
    (added, or removed by an edit) changed by DRAFT_MIN_CHANGED_TERMS, and by DRAFT_CHANGED_SHARE
    of those `recalled` had."""
    old, new = set(terms(recalled)), set(terms(draft))
    needed = max(DRAFT_MIN_CHANGED_TERMS, math.ceil(DRAFT_CHANGED_SHARE * len(old)))
    return len(old ^ new) >= needed


def draft_covers(draft: str, sent: str) -> bool:
    """The draft's recall may stand for the sent message (see the module's docstring)."""
    old, new = _folded(draft), _folded(sent)
    return bool(old) and new.startswith(old) and len(old) >= DRAFT_MIN_SHARE * len(new)


def adds_little(draft: str, sent: str) -> bool:
    """The sent message extends the draft by no new search term: no recall of its own needed.

    The whole texts' terms are compared, not the added tail's: a draft cut mid-word ("how do we
    dep") gains a term when the word is finished, and so does a CJK word finished by one character
    (its pair across the cut is new)."""
    if not _folded(sent).startswith(_folded(draft)):
        return False
    return set(terms(sent)) <= set(terms(draft))


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())
