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
    index = 0
    while index < len(rest):
        word = rest[index]
        if name == "env" and _ASSIGNMENT.fullmatch(word):
            assignments.append(word)
        elif word == "--":
            index += 1
            break
        elif word.startswith("-") and len(word) > 1:
            if name in ("command", "builtin", "exec", "env") and word not in ("-p",):
                return None  # `command -v`, `env -i`, `exec -a`: not a plain run of the next word
            index += 1 if word in values else 0
        else:
            break
        index += 1
    if name == "timeout" and index < len(rest):
        index += 1  # the duration
    inner = tuple(rest[index:])
    if not inner:
        return None
    return Inner(inner, tuple(assignments), transparent=name in TRANSPARENT)


def shell_script(words: Sequence[str]) -> str | None:
    """The line `bash -c 'LINE'` or `eval WORDS` runs, or None."""
    if not words:
        return None
    if words[0] == "eval":
        return " ".join(words[1:]) or None
    if words[0] not in SHELLS:
        return None
    for index, word in enumerate(words[1:-1], start=1):
        if word.startswith("-") and "c" in word.lstrip("-") and not word.startswith("--"):
            return words[index + 1]
    return None


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
