"""Commands that run another command: `env X=1 cmd`, `nohup cmd`, `timeout 5 cmd`, `sudo cmd`,
`xargs cmd`, `find … -exec cmd ;`, `bash -c 'line'`, `eval …`. A rule is matched against the
command they run as well as against themselves.

Some only change how the inner command runs (`time`, `nohup`, `nice`, `timeout`, `env` with
plain assignments, `command`, `builtin`, `exec`): allowing the inner command allows them too.
The rest (`sudo`, `xargs`, `find -exec`) are their own commands for an allow rule, and are
looked into only so that a deny rule for what they run still holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
# Options that take the next word as their value, for the wrappers that take options.
_OPTION_VALUES = {
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "exec": frozenset({"-a"}),
    "doas": frozenset({"-u", "-C"}),
    "xargs": frozenset(
        {
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "-d",
            "-E",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--replace",
            "--max-lines",
        }
    ),
}
TRANSPARENT = frozenset({"time", "nohup", "nice", "timeout", "stdbuf", "command", "builtin", "exec", "env"})
OPAQUE = frozenset({"sudo", "doas", "xargs"})


@dataclass(frozen=True)
class Inner:
    words: tuple[str, ...]  # the command run, program first
    assignments: tuple[str, ...] = ()  # NAME=value words `env` set for it
    transparent: bool = True  # allowing `words` allows the wrapper too


def inner_command(words: Sequence[str]) -> Inner | None:
    """What the (fully known) command `words` runs in its place, or None when it runs nothing else."""
    if not words:
        return None
    name, rest = words[0], list(words[1:])
    if name == "find":
        return _find_exec(rest)
    if name not in TRANSPARENT and name not in OPAQUE:
        return None
    assignments: list[str] = []
    values = _OPTION_VALUES.get(name, frozenset())
    plain = True  # no option changes how it runs: allowing the inner command may allow this
    index = 0
    while index < len(rest):
        word = rest[index]
        if name == "env" and _ASSIGNMENT.fullmatch(word):
            assignments.append(word)
        elif word == "--":
            index += 1
            break
        elif word.startswith("-") and len(word) > 1:
            if name == "command" and word.startswith("-") and ("v" in word or "V" in word):
                return None  # `command -v x` names x, runs nothing
            if name == "env" and word.startswith(("-S", "--split-string", "--sp")):
                return _split_string(word, rest[index + 1 :])
            plain = plain and word == "-p"
            index += 1 if _takes_next_word(word, values) else 0
        else:
            break
        index += 1
    if name == "timeout" and index < len(rest):
        index += 1  # the duration
    inner = tuple(rest[index:])
    if not inner:
        return None
    return Inner(
        inner, tuple(assignments), transparent=name in TRANSPARENT and (plain or name not in _STRICT)
    )


# Their options change what runs (`env -i`, `exec -a`): then they are looked into for deny rules only.
_STRICT = frozenset({"command", "builtin", "exec", "env"})


def _takes_next_word(word: str, values: frozenset[str]) -> bool:
    """Whether option `word` takes the next word as its value: `-u NAME`, or a cluster `-iu NAME`
    ending in such a letter (`-uNAME` holds its value)."""
    if word.startswith("--"):
        return "=" not in word and word in values
    for position, letter in enumerate(word[1:], start=1):
        if f"-{letter}" in values:
            return position == len(word) - 1
    return False


def _split_string(word: str, after: list[str]) -> Inner | None:
    """`env -S 'cmd args' more`: env splits the string into words and runs them."""
    if word in ("-S", "--split-string") or (word.startswith("--") and "=" not in word):
        value, after = (after[0], after[1:]) if after else ("", [])
    else:
        value = word.split("=", 1)[1] if word.startswith("--") else word[2:]
    inner = (*value.split(), *after)
    return Inner(inner, (), transparent=False) if inner else None


def shell_script(words: Sequence[str]) -> str | None:
    """The line `bash -c 'LINE'` or `eval WORDS` runs, or None."""
    if not words:
        return None
    if words[0] == "eval":
        rest = words[2:] if words[1:2] == ["--"] else words[1:]
        return " ".join(rest) or None
    if words[0] not in SHELLS:
        return None
    # bash's options come first (`-e`, `-o NAME`, `--norc`); with a `c` among them, the first word
    # after them is the line it runs.
    index, runs_line = 1, False
    while index < len(words) and words[index].startswith(("-", "+")) and words[index] not in ("-", "+"):
        word = words[index]
        index += 1
        if word == "--":
            break
        if word.startswith("--"):
            continue
        runs_line = runs_line or "c" in word[1:]
        if word[-1] in "oO" and index < len(words):
            index += 1  # `-o errexit`: its value
    return words[index] if runs_line and index < len(words) else None


def _find_exec(rest: list[str]) -> Inner | None:
    for index, word in enumerate(rest):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            inner = []
            for part in rest[index + 1 :]:
                if part in (";", "+"):
                    break
                inner.append(part)
            return Inner(tuple(inner), (), transparent=False) if inner else None
    return None
