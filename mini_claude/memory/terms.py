"""Search terms for recall ranking: words in scripts that space them, overlapping character pairs
in Chinese, Japanese and Korean (which need no spaces), so a message and a memory meet on them."""

from __future__ import annotations

import functools
import re
import unicodedata

# Han, kana and Hangul: runs of these are cut into overlapping pairs ("数据库" → 数据, 据库), the
# usual way to search text without spaces; Korean spaces its words but glues particles to them.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff"
TERM_MAX_CHARS = 40  # a pasted blob is one "word"; cut it so it cannot bloat the index
MAX_QUERY_TERMS = 64  # a long message (a pasted log) still makes a query that runs in milliseconds
# Words that say nothing about which memory is meant; they would only make every memory match.
_STOPWORDS_TEXT = """
    a about after again all also am an and any are as at be because been before being both but
    by can could did do does doing done for from get got had has have having he her here hers him
    his how i if in into is it its just let like me more most my no nor not now of off on once only
    or other our ours out over own please same she should so some such than that the their them
    then there these they this those through to too under until up us very was we were what when
    where which while who whom why will with would you your yours"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


@functools.cache
def _runs() -> re.Pattern[str]:
    """(CJK run, "") or ("", word); compiled on first use (it takes milliseconds, at start-up)."""
    return re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")


def terms(text: str) -> list[str]:
    """The search terms of `text`, in order, repeats kept (term frequency counts for documents)."""
    found: list[str] = []
    for cjk, word in _runs().findall(unicodedata.normalize("NFKC", text).casefold()):
        if cjk:
            found.extend([cjk[i : i + 2] for i in range(len(cjk) - 1)] if len(cjk) > 1 else [cjk])
            continue
        if not word.isascii():
            # "café" and "cafe" are one word to a reader: drop the accents (not from CJK: Hangul
            # and kana would decompose).
            bare = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
            word = unicodedata.normalize("NFC", bare)
        if len(word) > 1 and word not in STOPWORDS:
            found.append(word[:TERM_MAX_CHARS])
    return found


def document_text(text: str) -> str:
    """`text` as the index stores it: its terms, space-separated (the index splits on spaces)."""
    return " ".join(terms(text))


def match_query(text: str) -> str | None:
    """An FTS5 query matching any of the message's terms, or None when it has none.

    Each term is a quoted string of letters and digits only, so nothing a user types (quotes,
    `*`, `NEAR`, `-`, `col:`, NUL) can reach the query syntax."""
    unique = list(dict.fromkeys(terms(text)))[:MAX_QUERY_TERMS]
    return " OR ".join(f'"{term}"' for term in unique) if unique else None
