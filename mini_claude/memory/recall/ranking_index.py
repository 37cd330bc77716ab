"""The ranking index's tables and its saved file beside the memories.

Apart from ranking.py because this is where the index meets the disk, and the file found there may
be anything: a symlink, a FIFO, a huge file, a database someone else made. SQLite never opens it
itself: we read it without following symlinks, load it only when its schema is exactly ours, and
write it by temp file + rename.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import stat
from pathlib import Path

from mini_claude.core.files import safe_read
from mini_claude.core.files.atomic import replace_through_temp

INDEX_FILE = ".recall-index.sqlite3"
INDEX_FORMAT = 3  # bump when the schema or the terms change: older files are then rebuilt
# A saved index larger than this is not one we wrote (ours take ~2.5 KB a memory): rebuilt, not read.
INDEX_MIN_CAP_BYTES = 16 << 20
INDEX_CAP_BYTES_PER_MEMORY = 16 << 10
INDEX_FILE_MODE = 0o600  # it holds words of every memory

_SQLITE_HEADER_BYTES = 100
_SCHEMA = (
    # `day`: the local calendar day of the file's mtime (a proleptic ordinal, as `date.toordinal`);
    # `length`: how many terms its four fields hold together.
    "CREATE TABLE files(id INTEGER PRIMARY KEY, file_name TEXT NOT NULL UNIQUE, mtime_ns INTEGER NOT NULL,"
    " size INTEGER NOT NULL, inode INTEGER NOT NULL, usable INTEGER NOT NULL, day INTEGER NOT NULL,"
    " length INTEGER NOT NULL)",
    # `ascii` splits only where we put spaces (our terms), `porter` makes "deploys" find "deploy".
    "CREATE VIRTUAL TABLE terms USING fts5(name, description, type, body, tokenize='porter ascii')",
)
# Not saved (the temp schema): where each term is (its postings), and the stemmer for queries.
_LOOKUPS = (
    "CREATE VIRTUAL TABLE temp.term_instances USING fts5vocab(main, terms, instance)",
    "CREATE VIRTUAL TABLE temp.term_rows USING fts5vocab(main, terms, row)",
    "CREATE VIRTUAL TABLE temp.stemmer USING fts5(text, tokenize='porter ascii')",
    "CREATE VIRTUAL TABLE temp.stems USING fts5vocab(temp, stemmer, instance)",
)


class IndexUnusable(Exception):
    """The index file cannot serve: rebuild it (the reason is in the message)."""


def create_schema(db: sqlite3.Connection) -> None:
    """Make `db` an empty index of this format."""
    db.execute(f"PRAGMA user_version = {INDEX_FORMAT}")
    for statement in _SCHEMA:
        db.execute(statement)


def create_lookups(db: sqlite3.Connection) -> None:
    """The read-only views of the index that ranking asks (after the schema is created or checked)."""
    for statement in _LOOKUPS:
        db.execute(statement)


def read_index(path: Path, memories: int) -> bytes | None:
    """The saved index's bytes; None when there is none. Never follows a symlink nor blocks
    on a FIFO; a file that is no regular file, or too big, is left to be replaced."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise IndexUnusable(f"cannot open it: {error.strerror}") from error
    cap = max(INDEX_MIN_CAP_BYTES, INDEX_CAP_BYTES_PER_MEMORY * memories)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if (problem := safe_read.owner_problem(path, info)) is not None:
            raise IndexUnusable(problem)  # swapped in: never loaded, rebuilt as ours
        data = handle.read(cap) if stat.S_ISREG(info.st_mode) and info.st_size <= cap else b""
    if len(data) < _SQLITE_HEADER_BYTES:  # (SQLite cannot load an empty buffer at all)
        raise IndexUnusable("not a regular file of a plausible size")
    return data


def check_schema(db: sqlite3.Connection) -> None:
    """The loaded file holds exactly our tables: nothing in it (a view, a trigger) gets to run."""
    db.execute("PRAGMA trusted_schema = OFF")
    (version,) = db.execute("PRAGMA user_version").fetchone()
    found = db.execute("SELECT type, name, sql FROM sqlite_schema ORDER BY name").fetchall()
    if version != INDEX_FORMAT or found != _expected_schema():
        raise IndexUnusable("made by another version, or not by us")


def write_index(path: Path, data: bytes) -> None:
    """Save `data` at `path` through a temp file and a rename (a symlink there is replaced, never
    followed); raises OSError, with no temp file left behind."""
    temp = path.with_name(f"{INDEX_FILE}.{secrets.token_hex(4)}.tmp")
    replace_through_temp(path, temp, data, create_mode=INDEX_FILE_MODE, durable=False)


_expected: list[tuple[str, str, str]] = []


def _expected_schema() -> list[tuple[str, str, str]]:
    if not _expected:
        with contextlib.closing(sqlite3.connect(":memory:")) as db:
            for statement in _SCHEMA:
                db.execute(statement)
            _expected.extend(db.execute("SELECT type, name, sql FROM sqlite_schema ORDER BY name"))
    return _expected
