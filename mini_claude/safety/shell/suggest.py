"""The rule an "always" answer saves for a command: a prefix rule for its first words
(`npm test -- -x` → `Bash(npm test:*)`, `npm run build` → `Bash(npm run build:*)`), or the
exact command where a prefix would allow far more than was asked (an interpreter or wrapper
runs anything: `python x.py`; a destructive command: `rm -rf build`)."""

from __future__ import annotations

import re

from mini_claude.safety.shell.parse import Command

MAX_SUBCOMMAND_WORDS = 2
# Programs whose next word names what they do (`git push`, `npm test`); of any other program the
# next word is an argument (`touch notes.txt`), and the rule names the program alone.
WITH_SUBCOMMANDS = frozenset(
    {
        "git", "npm", "yarn", "pnpm", "npx", "cargo", "go", "docker", "podman", "kubectl", "helm",
        "make", "pip", "pip3", "poetry", "uv", "pdm", "pipenv", "hatch", "tox", "nox", "gh", "glab",
        "terraform", "dotnet", "mvn", "gradle", "brew", "apt", "apt-get", "systemctl", "rustup",
        "conda", "mix", "bundle", "rake", "rails", "composer", "swift", "flutter", "dart", "nx",
        "turbo", "just", "cmake", "ctest", "bazel",
    }
)  # fmt: skip
# `npm run build`: after these, the next word names what runs, so it belongs to the prefix too.
_RUNNERS = frozenset({"run", "run-script", "exec", "x", "compose", "workspace"})
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9_:-]*")
# A prefix rule for these would allow any program or any damage: only the exact command is saved.
EXACT_ONLY = frozenset(
    {
        "python", "python3", "node", "deno", "bun", "ruby", "perl", "php", "bash", "sh", "zsh",
        "dash", "ksh", "fish", "env", "sudo", "doas", "xargs", "eval", "exec", "command", "builtin",
        "nohup", "time", "nice", "timeout", "stdbuf", "ssh", "source", ".", "rm", "rmdir", "dd",
        "shred", "truncate", "mkfs", "chmod", "chown", "chgrp", "kill", "pkill", "killall", "mv",
        "find", "awk", "sed", "curl", "wget",
    }
)  # fmt: skip


def suggested_rule(command: Command) -> str | None:
    """The rule text for `command`, or None when none can be saved (a word known only when it
    runs, a `*` that a rule would read as a wildcard)."""
    if command.name is None or command.assignments or any(not w.static for w in command.words):
        return None
    text = command.text()
    if "*" in text or "(" in text or ")" in text:
        return None
    name = command.name
    if name in EXACT_ONLY or "/" in name:
        return f"Bash({text})"
    prefix = [name]
    for word in command.words[1:]:
        value = word.text or ""
        if (
            name not in WITH_SUBCOMMANDS
            or len(prefix) > MAX_SUBCOMMAND_WORDS
            or not _SUBCOMMAND.fullmatch(value)
        ):
            break
        if len(prefix) == 2 and prefix[1] not in _RUNNERS:
            break
        prefix.append(value)
    return f"Bash({' '.join(prefix)}:*)"
