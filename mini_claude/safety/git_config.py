"""The few keys of a git config file that name other places which run code: `core.hooksPath` (the
hooks folder git runs instead of `<gitdir>/hooks`) and `include.path` / `includeIf.<cond>.path`
(config files read as if written in place, so their `core.fsmonitor` runs on `git status`).

Read as git reads them (git-config(1), "Syntax"): a UTF-8 BOM at the start skipped, sections and
keys in any letter case, quoted and escaped values, `#`/`;` comments, a backslash continuing a
line, a key on the header's line; a relative include taken from the folder of the path as opened;
`~/` and `~user/` expanded. A file that is missing, unreadable or not a regular file is treated as
empty: a config git cannot read cannot point anywhere either. One too large to read here is
reported as such (RunsCode.too_large): git reads it, so what it names is unknown.

Settings also come from the environment: `GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_<n>` and
`GIT_CONFIG_VALUE_<n>`, and `GIT_CONFIG_PARAMETERS` (what `git -c` hands to the git it runs).
"""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MAX_CONFIG_BYTES = 1 << 20  # larger is not read (no real config is; reading must stay cheap): unknown
MAX_ENV_CONFIG_ENTRIES = 1_000  # GIT_CONFIG_COUNT read this far: git takes any count, none needs more
MAX_INCLUDE_DEPTH = 10  # git's own limit (config.c, MAX_INCLUDE_DEPTH)
BOM = "\ufeff"
Entries = Sequence[tuple[str, str, str]]  # (section, key, value), as config_entries gives them
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}


@dataclass
class RunsCode:
    """The places config files name: hooks folders as written (relative ones not yet joined to a
    work tree) and every config file read, the included ones included (resolved)."""

    hooks_paths: list[str] = field(default_factory=list)
    config_files: list[Path] = field(default_factory=list)
    too_large: list[Path] = field(default_factory=list)  # read by git, over MAX_CONFIG_BYTES here
    _read: set[Path] = field(default_factory=set, repr=False)  # config_files, to look up at once


def read_configs(files: list[Path], home: Path, settings: Entries = ()) -> RunsCode:
    """What `files` and `settings` (from env_entries), and everything they include up to git's
    depth, name."""
    found = RunsCode()
    _take(settings, None, home, found, depth=0)
    for file in files:
        _read(file, home, found, depth=0)
    return found


def env_entries(environ: Mapping[str, str]) -> Entries:
    """The settings git takes from the environment, as (section, key, value) like config_entries."""
    pairs: list[tuple[str, str]] = []
    try:
        count = min(int(environ.get("GIT_CONFIG_COUNT", "0").strip() or 0), MAX_ENV_CONFIG_ENTRIES)
    except ValueError:
        count = 0  # git refuses to run with a bad count
    for n in range(count):
        if f"GIT_CONFIG_KEY_{n}" in environ:
            pairs.append((environ[f"GIT_CONFIG_KEY_{n}"], environ.get(f"GIT_CONFIG_VALUE_{n}", "")))
    pairs += _parameters(environ.get("GIT_CONFIG_PARAMETERS", ""))
    entries: list[tuple[str, str, str]] = []
    for name, value in pairs:
        section, dot, key = name.rpartition(".")
        if dot and section:
            head, sub_dot, sub = section.partition(
                "."
            )  # `includeIf.<cond>.path`: the condition keeps its case
            entries.append((head.lower() + sub_dot + sub, key.lower(), value))
    return entries


def _parameters(text: str) -> list[tuple[str, str]]:
    """`GIT_CONFIG_PARAMETERS`: words in git's shell quoting, `'key'='value'` (or an older
    `'key=value'`) apart by blanks; read up to the first thing git would reject."""
    pairs: list[tuple[str, str]] = []
    i, end = 0, len(text)
    while i < end:
        if text[i].isspace():
            i += 1
            continue
        key = _quoted_word(text, i)
        if key is None:
            break
        name, i = key
        if text.startswith("='", i):
            value = _quoted_word(text, i + 1)
            if value is None:
                break
            pairs.append((name, value[0]))
            i = value[1]
        else:
            name, equals, rest = name.partition("=")
            pairs.append((name, rest if equals else "true"))
    return pairs


def _quoted_word(text: str, i: int) -> tuple[str, int] | None:
    """The word starting at `text[i]`: quoted pieces `'…'` joined by escaped characters (git's
    sq_quote writes `'` as `'\\''`), and where it ends; None when it is no such word."""
    pieces: list[str] = []
    while i < len(text) and text[i] == "'":
        close = text.find("'", i + 1)
        if close < 0:
            return None
        pieces.append(text[i + 1 : close])
        i = close + 1
        if text.startswith("\\", i) and i + 1 < len(text):
            pieces.append(text[i + 1])
            i += 2
    return ("".join(pieces), i) if pieces else None


def _read(opened: Path, home: Path, found: RunsCode, depth: int) -> None:
    """`opened` is the path as git opens it: a relative include is taken from its folder, not from
    the folder of the file a symlink there leads to (~/.gitconfig -> dotfiles/git/gitconfig
    including `shared.inc` reads ~/shared.inc, as `git config --show-origin` shows)."""
    file = Path(os.path.realpath(opened))
    if file in found._read or depth > MAX_INCLUDE_DEPTH:
        return
    found._read.add(file)
    found.config_files.append(file)
    data = read_small_file(file, MAX_CONFIG_BYTES)
    if data is None:
        if _larger_than(file, MAX_CONFIG_BYTES):
            found.too_large.append(file)
        return
    _take(config_entries(data.decode("utf-8", "surrogateescape")), opened, home, found, depth)


def _take(entries: Entries, opened: Path | None, home: Path, found: RunsCode, depth: int) -> None:
    """The hooks folders and includes among `entries`, read from `opened` (None: the environment)."""
    for section, key, value in entries:
        if section == "core" and key == "hookspath" and value:
            found.hooks_paths.append(value)
        elif key == "path" and value and (section == "include" or section.startswith("includeif.")):
            # Every includeIf counts, whatever its condition: conditions can come true later.
            expanded = _expand_user(value, home)
            if expanded is None or (opened is None and not os.path.isabs(expanded)):
                continue  # git stops on both: an unknown user; a relative include not in a file
            # Joined as text, `..` kept: the kernel resolves it after the symlinks before it, as for git.
            included = os.path.join(os.path.dirname(opened or ""), expanded)
            _read(Path(included), home, found, depth + 1)


def hooks_folder(value: str, work_tree: Path, home: Path) -> Path | None:
    """Where `core.hooksPath = value` points for hooks run in `work_tree` (git runs them there:
    a relative value is taken from the top of the work tree); None where git would stop."""
    expanded = _expand_user(value, home)
    return Path(os.path.realpath(work_tree / expanded)) if expanded is not None else None


def _expand_user(value: str, home: Path) -> str | None:
    """`~`, `~/x` and `~user/x` as git expands them (expand_user_path): None for a user that
    does not exist, where git stops with an error."""
    if not value.startswith("~"):
        return value
    user, slash, rest = value[1:].partition("/")
    if not user:
        return str(home) + slash + rest
    try:
        return os.path.join(pwd.getpwnam(user).pw_dir, rest)
    except KeyError:
        return None


def _larger_than(file: Path, limit: int) -> bool:
    try:
        info = os.stat(file)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size > limit


def read_small_file(file: Path, limit: int) -> bytes | None:
    """The whole of a regular file of at most `limit` bytes, or None for anything else (missing,
    unreadable, a folder, a FIFO, a device, larger); opened without blocking on a FIFO."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def config_entries(text: str) -> list[tuple[str, str, str]]:
    """(section, key, value) for every variable, section and key lowercased; a subsection joins
    the section after a dot with its case kept (`includeif.gitdir:~/work/`). A key without `=`
    has the value "true", as git reads it."""
    entries: list[tuple[str, str, str]] = []
    section = ""
    i, end = (1 if text.startswith(BOM) else 0), len(text)  # git skips one UTF-8 BOM at the start
    while i < end:
        char = text[i]
        if char in " \t\r\n":
            i += 1
        elif char in "#;":
            i = _line_end(text, i)
        elif char == "[":
            section, i = _header(text, i + 1)
        elif char.isalpha():
            start = i
            while i < end and (text[i].isalnum() or text[i] == "-"):
                i += 1
            key = text[start:i].lower()
            while i < end and text[i] in " \t":
                i += 1
            if i < end and text[i] == "=":
                value, i = _value(text, i + 1)
            else:
                value = "true"
            entries.append((section, key, value))
        else:  # a line git would reject: skip it, the rest of the file still counts
            i = _line_end(text, i)
    return entries


def _line_end(text: str, i: int) -> int:
    newline = text.find("\n", i)
    return len(text) if newline < 0 else newline + 1


def _header(text: str, i: int) -> tuple[str, int]:
    """`[name]`, `[name "sub"]` or the old `[name.sub]`, from just after the `[`."""
    end = len(text)
    start = i
    while i < end and text[i] not in ' \t"]\n':
        i += 1
    name = text[start:i].lower()
    while i < end and text[i] in " \t":
        i += 1
    if i < end and text[i] == '"':
        sub: list[str] = []
        i += 1
        while i < end and text[i] not in '"\n':
            if text[i] == "\\" and i + 1 < end:
                i += 1
            sub.append(text[i])
            i += 1
        name += "." + "".join(sub)
        i += 1
    close = text.find("]", i, _line_end(text, i))
    return name, (close + 1 if close >= 0 else _line_end(text, i))


def _value(text: str, i: int) -> tuple[str, int]:
    """A value from just after `=` to its line's end, unquoted and unescaped, as git reads it:
    outer blanks dropped, blanks inside quotes kept, a comment outside quotes ends it."""
    out: list[str] = []
    kept = 0  # len(out) up to the last character that is not trailing blank outside quotes
    quoted = False
    end = len(text)
    while i < end:
        char = text[i]
        i += 1
        if char == "\n" and not quoted:
            break
        if char == "\\" and i < end:
            escaped = text[i]
            i += 1
            if escaped == "\n":
                continue  # the value goes on on the next line
            out.append(_ESCAPES.get(escaped, escaped))
            kept = len(out)
        elif char == '"':
            quoted = not quoted
            kept = len(out)
        elif char in "#;" and not quoted:
            i = _line_end(text, i - 1)
            break
        elif char in " \t\r" and not quoted:
            if out:
                out.append(char)
        else:
            out.append(char)
            kept = len(out)
    return "".join(out[:kept]), i
