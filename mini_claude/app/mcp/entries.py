"""A server entry from `mini-claude mcp add`'s words, in Claude Code's format, checked as the
file's entries are (a name of letters, digits, - and _; a command, or an http(s) address). A
`${VAR}` is kept as written, to be expanded each time the server starts."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from mini_claude.core.untrusted import visible_text
from mini_claude.tools.mcp.config import ConfigProblem, Transport, parse_server

_ENV_WORD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
_HEADER_WORD = re.compile(r"([^:\s]+)\s*:\s*(.*)", re.DOTALL)


class EntryError(ValueError):
    """Words that make no server entry: one line saying what to write instead."""


def server_entry(
    name: str, transport: Transport, target: list[str], env: list[str], headers: list[str]
) -> dict[str, Any]:
    """The entry for `mcp add`: `target` is the command and its arguments (stdio) or the URL."""
    entry: dict[str, Any]
    if transport == "stdio":
        if not target:
            raise EntryError(f"no command: mini-claude mcp add {name} -- COMMAND [ARGS…]")
        if headers:
            raise EntryError("--header is for http and sse servers (--transport http URL)")
        entry = {"type": "stdio", "command": target[0], "args": target[1:]}
        if env:
            entry["env"] = dict(_pairs(env, _ENV_WORD, "-e takes KEY=VALUE"))
    else:
        if len(target) != 1:
            raise EntryError(f"one URL: mini-claude mcp add --transport {transport} {name} https://…")
        if env:
            raise EntryError("-e sets a stdio server's environment; an http or sse server takes --header")
        entry = {"type": transport, "url": target[0]}
        if headers:
            entry["headers"] = dict(_pairs(headers, _HEADER_WORD, "--header takes 'Name: value'"))
    try:  # checked as at start, with every ${VAR} taken as set: it may be set later
        parse_server(name, entry, scope="user", source="mcp add", environ=_AnyVariable())
    except ConfigProblem as problem:
        raise EntryError(str(problem).replace("server ", "", 1)) from None
    return entry


def _pairs(words: list[str], pattern: re.Pattern[str], usage: str) -> Iterator[tuple[str, str]]:
    for word in words:
        found = pattern.fullmatch(word)
        if found is None:
            raise EntryError(f"{usage}, not {visible_text(word)[:60]!r}")
        yield found.group(1), found.group(2)


class _AnyVariable(Mapping[str, str]):
    def __getitem__(self, key: str) -> str:
        return "set"

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0
