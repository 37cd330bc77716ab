"""Commands that only read: they cannot change a file or reach the network, so in the default
mode they run without asking (unless a rule says otherwise; their paths still obey the read
rules). The list is Codex's `is_known_safe_command` (codex-rs, command_safety), option checks
included, with the few additions marked below; docs/permissions.md lists it for users.

A command counts only by its plain name (`ls`, never `./ls` or `/tmp/x/ls`), with every word
known before it runs and no assignment in front of it that changes what runs.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence

Args = Sequence[str]

_PLAIN = frozenset(
    {
        # Codex's list
        "cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id", "ls", "nl", "paste",
        "pwd", "rev", "seq", "stat", "tail", "tr", "true", "uname", "wc", "which", "whoami",
        # ours: they print what they read and take no option that writes or runs
        "basename", "dirname", "realpath", "readlink", "cmp", "diff", "du", "df",
        "md5sum", "sha1sum", "sha256sum", "sha512sum",
    }
)  # fmt: skip
_LINUX_ONLY = frozenset({"numfmt", "tac"})  # as in Codex: other systems' versions differ
_FIND_UNSAFE = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf"}
)
_GIT_READ_ONLY = frozenset({"status", "log", "diff", "show", "branch"})
_GIT_UNSAFE = frozenset({"--output", "--ext-diff", "--textconv", "--exec", "--paginate"})
# git's options before the subcommand that take a value of their own (find_git_subcommand).
_GIT_OPTIONS_WITH_VALUE = frozenset({"-C", "-c", "--config-env", "--exec-path", "--git-dir", "--namespace",
                                     "--super-prefix", "--work-tree"})  # fmt: skip
_GIT_BRANCH_READ = frozenset(
    {"--list", "-l", "--show-current", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose"}
)
_SED_PRINT = re.compile(r"(\d+,)?\d+p")
# Read-only unless given an option that writes or runs: (its short letters, its long names).
_WRITING_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "base64": ("o", ("output",)),
    "rg": ("z", ("pre", "hostname-bin", "search-zip")),
    "sort": ("o", ("output", "compress-program")),  # ours
    "file": ("C", ("compile",)),  # ours: `file -C` compiles a magic file
    "tree": ("o", ()),  # ours: `tree -o FILE` writes
}


def is_read_only(args: Args) -> bool:
    """Whether `args` (the program's name first, every word known) only reads."""
    if not args:
        return False
    name, rest = args[0], args[1:]
    if name in _PLAIN or (name in _LINUX_ONLY and sys.platform.startswith("linux")):
        return True
    if name in _WRITING_OPTIONS:
        return not _names_option(rest, *_WRITING_OPTIONS[name])
    check = _CHECKS.get(name)
    return check is not None and check(rest)


def _names_option(rest: Args, short: str, long: tuple[str, ...]) -> bool:
    """Whether `rest` gives one of these options in any spelling getopt takes: a short letter
    alone or inside a cluster (`-mo`), a long name or any start of it (`--out=` for `--output`)."""
    for word in rest:
        if word == "--":
            return False
        if word.startswith("--"):
            given = word[2:].split("=", 1)[0]
            if given and any(name.startswith(given) for name in long):
                return True
        elif word.startswith("-") and any(letter in short for letter in word[1:]):
            return True
    return False


def _find(rest: Args) -> bool:
    return not any(a in _FIND_UNSAFE for a in rest)


def _git(rest: Args) -> bool:
    if any(a in ("-c", "--config-env") or (a.startswith("-c") and len(a) > 2) or a.startswith("--config-env=")
           for a in rest):  # fmt: skip
        return False  # `-c core.pager=…` makes git run what it names
    index = 0
    while index < len(rest) and rest[index].startswith("-"):
        index += 2 if rest[index] in _GIT_OPTIONS_WITH_VALUE else 1
    if index >= len(rest) or rest[index] not in _GIT_READ_ONLY:
        return False
    subcommand, after = rest[index], rest[index + 1 :]
    if any(a in _GIT_UNSAFE or a.startswith(("--output=", "--exec=")) for a in after):
        return False
    if subcommand != "branch":
        return True
    # `git branch NAME` creates a branch: only a listing is read-only.
    return not after or all(a in _GIT_BRANCH_READ or a.startswith("--format=") for a in after)


def _sed(rest: Args) -> bool:
    return len(rest) <= 3 and len(rest) >= 2 and rest[0] == "-n" and _SED_PRINT.fullmatch(rest[1]) is not None


_UNIQ_VALUES = ("skip-fields", "skip-chars", "check-chars")


def _uniq(rest: Args) -> bool:
    """`uniq IN OUT` writes OUT: read-only with one file at most."""
    names, index, options = 0, 0, True
    while index < len(rest):
        word, index = rest[index], index + 1
        if options and word == "--":
            options = False
        elif options and word.startswith("--"):
            given = word[2:]
            if "=" not in given and any(name.startswith(given) for name in _UNIQ_VALUES):
                index += 1  # `--skip-fields 1`: the value is the next word
        elif options and word.startswith("-") and word != "-":
            letters = word[1:]
            value_at = next((i for i, letter in enumerate(letters) if letter in "fsw"), None)
            if value_at is not None and value_at == len(letters) - 1:
                index += 1  # `-f 1`
        else:
            names += 1
    return names <= 1


_CHECKS: dict[str, Callable[[Args], bool]] = {
    "find": _find,
    "git": _git,
    "sed": _sed,
    "uniq": _uniq,  # Codex's list, checked: its second file is written
}
