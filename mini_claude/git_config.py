"""The few keys of a git config file that name other places which run code: `core.hooksPath` (the
hooks folder git runs instead of `<gitdir>/hooks`) and `include.path` / `includeIf.<cond>.path`
(config files read as if written in place, so their `core.fsmonitor` runs on `git status`).

Read as git reads them (git-config(1), "Syntax"): a UTF-8 BOM at the start skipped, sections and
keys in any letter case, quoted and escaped values, `#`/`;` comments, a backslash continuing a
line, a key on the header's line; a relative include taken from the folder of the path as opened.
A file that is missing, unreadable, not a regular file or too large is treated as empty: nothing
here is an error, a config git cannot read cannot point anywhere either.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

MAX_CONFIG_BYTES = 1 << 20  # larger is skipped: no real config is, and reading it must stay cheap
MAX_INCLUDE_DEPTH = 10  # git's own limit (config.c, MAX_INCLUDE_DEPTH)
BOM = "\ufeff"
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}


@dataclass
class RunsCode:
    """The places config files name: hooks folders as written (relative ones not yet joined to a
    work tree) and every config file read, the included ones included (resolved)."""

    hooks_paths: list[str] = field(default_factory=list)
    config_files: list[Path] = field(default_factory=list)


def read_configs(files: list[Path], home: Path) -> RunsCode:
    """What `files` (and everything they include, up to git's depth) name."""
    found = RunsCode()
    for file in files:
        _read(file, home, found, depth=0)
    return found


def _read(opened: Path, home: Path, found: RunsCode, depth: int) -> None:
    """`opened` is the path as git opens it: a relative include is taken from its folder, not from
    the folder of the file a symlink there leads to (~/.gitconfig -> dotfiles/git/gitconfig
    including `shared.inc` reads ~/shared.inc, as `git config --show-origin` shows)."""
    file = Path(os.path.realpath(opened))
    if file in found.config_files or depth > MAX_INCLUDE_DEPTH:
        return
    found.config_files.append(file)
    for section, key, value in config_entries(_text(file)):
        if section == "core" and key == "hookspath" and value:
            found.hooks_paths.append(value)
        elif key == "path" and value and (section == "include" or section.startswith("includeif.")):
            # Every includeIf counts, whatever its condition: conditions can come true later.
            # Joined as text, `..` kept: the kernel resolves it after the symlinks before it, as for git.
            included = os.path.join(os.path.dirname(opened), _expand_user(value, home))
            _read(Path(included), home, found, depth + 1)


def hooks_folder(value: str, work_tree: Path, home: Path) -> Path:
    """Where `core.hooksPath = value` points for hooks run in `work_tree` (git runs them there:
    a relative value is taken from the top of the work tree)."""
    return Path(os.path.realpath(work_tree / _expand_user(value, home)))


def _expand_user(value: str, home: Path) -> str:
    """`~/x` and `~` as git expands them (only the current user's home)."""
    if value == "~" or value.startswith("~/"):
        return str(home) + value[1:]
    return value


def _text(file: Path) -> str:
    data = read_small_file(file, MAX_CONFIG_BYTES)
    return data.decode("utf-8", "surrogateescape") if data is not None else ""


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
