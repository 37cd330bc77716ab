"""Turning the paths a model writes into real filesystem paths, and comparing them safely.

Every permission decision is made on the fully resolved path (symlinks followed), compared by
path components, never by string prefix (`/ws` does not contain `/ws-evil`).
"""

from __future__ import annotations

import os
from pathlib import Path

from mini_claude.core import prompts
from mini_claude.core.errors import ToolError

# Inside bash's $'…' quotes: the characters that have a short escape of their own.
_SHELL_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def resolve_path(raw: str, base: Path) -> Path:
    """`raw` as an absolute path with `~` expanded, joined to `base` if relative, symlinks resolved.

    Missing targets are fine (a file about to be created); a dangling symlink resolves to its target.
    """
    if not raw or not raw.strip():
        raise ToolError(prompts.notice("path_empty"))
    if "\0" in raw or "\n" in raw or "\r" in raw:
        raise ToolError(prompts.notice("path_bad_character", path=repr(raw)))
    return Path(os.path.realpath(written_path(raw, base), strict=False))


def written_path(raw: str, base: Path) -> Path:
    """`raw` as an absolute path the way it was written: `~` expanded and joined to `base`, but no
    symlink followed and no `..` folded. Sensitive places are judged by these names as well as by
    the resolved path (a `.git` that is a symlink to `.gitstore`). Call after resolve_path."""
    expanded = Path(os.path.expanduser(raw))
    return expanded if expanded.is_absolute() else Path(base) / expanded


def is_within(path: Path, root: Path) -> bool:
    """True when `path` is `root` or lies below it, after resolving both (compared by components)."""
    real_path = Path(os.path.realpath(path))
    real_root = Path(os.path.realpath(root))
    return real_path.is_relative_to(real_root)


def stays_in_its_folder(folder: Path) -> bool:
    """True when `folder`, symlinks resolved, still lies inside the folder that holds it: a
    memory folder replaced by a symlink to `~` or `~/.ssh` must not make those memory."""
    return is_within(folder, Path(folder).parent)


def display_path(path: Path, project_dir: Path) -> str:
    """How a path is shown to the model and the user: relative inside the project, else absolute;
    quoted as `$'…'` when it holds a line break or another invisible character (see visible_path)."""
    if path == project_dir:
        return "."
    if path.is_relative_to(project_dir):
        return visible_path(str(path.relative_to(project_dir)))
    return visible_path(str(path))


def visible_path(text: str) -> str:
    """`text` unchanged when every character is visible, else quoted the way bash writes `$'…'`.

    A file name may hold a line break, an escape code or a bidi control: shown raw it would fake
    extra lines in a listing or a permission question, or disguise itself. The quoted form is
    unambiguous, and run_shell accepts it as is. Undecodable bytes (surrogate escapes) become `\\xHH`.
    """
    if text.isprintable():
        return text
    return "$'" + "".join(_quoted_char(char) for char in text) + "'"


def _quoted_char(char: str) -> str:
    if char in _SHELL_ESCAPES:
        return _SHELL_ESCAPES[char]
    if char.isprintable():
        return char
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x80:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
