"""Search terms for recall ranking: words in scripts that space them (irregular English forms as
their base form: "went" is "go"), overlapping character pairs in Chinese, Japanese and Korean
(which need no spaces), so a message and a memory meet on them."""

from __future__ import annotations

import functools
import re
import unicodedata

from mini_claude.memory.recall.lemmas import lemma

# Han, kana and Hangul: runs of these are cut into overlapping pairs ("数据库" → 数据, 据库), the
# usual way to search text without spaces; Korean spaces its words but glues particles to them.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff"
TERM_MAX_CHARS = 40  # a pasted blob is one "word"; cut it so it cannot bloat the index
MAX_QUERY_TERMS = 64  # per query: a pasted log still makes queries that run in milliseconds
LONG_QUERY_TERMS = 16  # more distinct terms than this, on several lines: ranked by parts too
PART_MIN_TERMS = 4  # a part of a long message (its first lines, its last lines) holds this many
PROSE_MIN_STOPWORDS = 2  # a line with fewer reads like no sentence (a log line, code)
MAX_TERMS_WEIGHED = 400  # of a huge paste, the first and the last half of this many distinct terms
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
            found.append(lemma(word)[:TERM_MAX_CHARS])
    return found


def query_parts(text: str) -> list[list[str]]:
    """The term lists recall ranks `text` by: one query each, their results taken in turn.

    A short message is one list, its distinct terms. A long one (several lines, more than
    LONG_QUERY_TERMS terms: a log or code pasted before or after the question) is searched by its
    parts too, so the question's few words are not outvoted by the paste's many: the line that
    reads most like a sentence (the most stopwords), the last lines and the first lines (each
    until it holds PART_MIN_TERMS terms), then all of its terms (ranking.py keeps the rarest)."""
    whole = _distinct(terms(text))
    lines = [found for line in text.splitlines() if (found := _distinct(terms(line)))]
    if len(lines) < 2 or len(whole) <= LONG_QUERY_TERMS:
        return [_bounded(whole)] if whole else []
    parts: list[list[str]] = []
    for part in (_prose_line(text), _leading(lines), _leading(lines[::-1]), whole):
        if part and (part := _bounded(part)) not in parts:
            parts.append(part)
    return parts


def _distinct(found: list[str]) -> list[str]:
    return list(dict.fromkeys(found))


def _bounded(part: list[str]) -> list[str]:
    """Of a huge paste's terms, the first and the last half of MAX_TERMS_WEIGHED."""
    half = MAX_TERMS_WEIGHED // 2
    return part if len(part) <= MAX_TERMS_WEIGHED else part[:half] + part[-half:]


def _leading(lines: list[list[str]]) -> list[str]:
    """The terms of the first of `lines` until there are PART_MIN_TERMS of them."""
    part: list[str] = []
    for line in lines:
        part += [term for term in line if term not in part]
        if len(part) >= PART_MIN_TERMS:
            break
    return part


def _prose_line(text: str) -> list[str]:
    """The terms of the line with the most stopwords (the last of equals): in a log or code,
    the question asked about it; [] when no line has PROSE_MIN_STOPWORDS."""
    best, most = "", PROSE_MIN_STOPWORDS
    for line in text.splitlines():
        count = sum(word in STOPWORDS for _, word in _runs().findall(line.casefold()))
        if count >= most:
            best, most = line, count
    return _distinct(terms(best))
