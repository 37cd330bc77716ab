"""MCP server entries in Claude Code's `.mcp.json` format, checked: `mcpServers` → a name → a
stdio server (`command`, `args`, `env`) or a remote one (`type` http or sse, `url`, `headers`),
with `${VAR}` and `${VAR:-default}` expanded in those fields from the environment. A wrong
entry is one line naming it; the others still count."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from mini_claude.core.untrusted import visible_text

Transport = Literal["stdio", "http", "sse"]
Scope = Literal["user", "project"]
SCOPES: tuple[Scope, ...] = ("user", "project")  # the project's win a name both use
TRANSPORTS: tuple[Transport, ...] = ("stdio", "http", "sse")
# Claude Code's other names for the streamable HTTP transport.
TRANSPORT_ALIASES: dict[str, Transport] = {"streamable-http": "http", "streamableHttp": "http"}
SERVERS_KEY = "mcpServers"
# A server's name becomes part of every tool name (`mcp__name__tool`, at most 64 characters);
# without `__` in it, a tool name says which server it is of (a rule for `mcp__github` must not
# cover a server named `github__x`).
NAME = re.compile(r"(?!.*__)[A-Za-z0-9_-]{1,40}")
MAX_SERVERS = 100  # per file
MAX_ARGS = 500
MAX_TEXT_CHARS = 10_000  # a command, an argument, a value
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ConfigProblem(ValueError):
    """Why a server entry cannot be used: one line, naming the server and the field."""


@dataclass(frozen=True)
class ServerConfig:
    name: str
    transport: Transport
    scope: Scope
    source: str  # the file it came from, as the user is shown it
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False)  # as written, unexpanded

    @property
    def command_line(self) -> str:
        """What runs (stdio) or where it connects (http, sse), on one line as a shell would take it."""
        if self.transport == "stdio":
            return visible_text(shlex.join([self.command, *self.args]))
        return visible_text(self.url)

    def fingerprint(self) -> str:
        """What an approval covers: the entry as written. Another command, argument, variable,
        address or header in the file asks again."""
        written = json.dumps(dict(self.raw), sort_keys=True, ensure_ascii=True, default=str)
        return hashlib.sha256(written.encode("ascii")).hexdigest()[:32]


def parse_servers(
    data: Mapping[str, Any], *, scope: Scope, source: str, environ: Mapping[str, str] | None = None
) -> tuple[list[ServerConfig], list[str], dict[str, str]]:
    """The servers of a config file's object (its `mcpServers`), a line for each problem, and
    the servers that cannot start with why (by name)."""
    servers_value = data.get(SERVERS_KEY, {})
    if not isinstance(servers_value, dict):
        return [], [f"{source}: {SERVERS_KEY} must be an object of server name: settings: ignored"], {}
    environ = os.environ if environ is None else environ
    servers, problems, unusable = [], [], {}
    for index, (name, entry) in enumerate(servers_value.items()):
        if index >= MAX_SERVERS:
            problems.append(f"{source}: more than {MAX_SERVERS} servers: the rest are ignored")
            break
        try:
            servers.append(parse_server(name, entry, scope=scope, source=source, environ=environ))
        except ConfigProblem as problem:
            problems.append(f"{source}: {problem}")
            if isinstance(name, str) and NAME.fullmatch(name):
                unusable[name] = str(problem).removeprefix(f"server {name}: ")
    return servers, problems, unusable


def parse_server(
    name: str, entry: object, *, scope: Scope, source: str, environ: Mapping[str, str]
) -> ServerConfig:
    """One server entry; ConfigProblem when it cannot be used."""
    if not NAME.fullmatch(name):
        raise ConfigProblem(
            f"server {visible_text(name)[:60]!r}: a name is 1 to 40 letters, digits, - or _ (no __): ignored"
        )
    if not isinstance(entry, dict):
        raise ConfigProblem(f"server {name}: must be an object (command and args, or type and url)")
    where = f"server {name}"
    kind = transport_of(entry, where)
    expand = _Expander(environ, where)
    if kind == "stdio":
        command = _text(entry.get("command"), f"{where}: command", empty=False)
        args = _texts(entry.get("args", []), f"{where}: args")
        env = _mapping(entry.get("env", {}), f"{where}: env", _ENV_NAME)
        return ServerConfig(
            name, kind, scope, source, command=expand(command), args=tuple(expand(arg) for arg in args),
            env={key: expand(value) for key, value in env.items()}, raw=entry,
        )  # fmt: skip
    url = expand(_text(entry.get("url"), f"{where}: url", empty=False))
    if not re.match(r"https?://[^/\s]", url):
        raise ConfigProblem(f"{where}: url {visible_text(url)[:80]!r} must start with http:// or https://")
    headers = _mapping(entry.get("headers", {}), f"{where}: headers", _HEADER_NAME)
    expanded = {key: expand(value) for key, value in headers.items()}
    if any("\n" in value or "\r" in value for value in expanded.values()):
        raise ConfigProblem(f"{where}: a header value holds a line break")
    return ServerConfig(name, kind, scope, source, url=url, headers=expanded, raw=entry)


def transport_of(entry: Mapping[str, Any], where: str) -> Transport:
    """`type` as written (Claude Code's names too); without one, stdio when there is a command."""
    written = entry.get("type", entry.get("transport"))
    if written is None:
        return "stdio" if "command" in entry or "url" not in entry else "http"
    kind = TRANSPORT_ALIASES.get(written, written) if isinstance(written, str) else None
    if kind not in TRANSPORTS:
        raise ConfigProblem(f"{where}: type {visible_text(str(written))[:40]!r} is not stdio, http or sse")
    return kind


class _Expander:
    """`${VAR}` and `${VAR:-default}` from the environment; a variable that is unset and has no
    default is an error (running with the text `${TOKEN}` as a password helps no one)."""

    def __init__(self, environ: Mapping[str, str], where: str) -> None:
        self.environ, self.where = environ, where

    def __call__(self, text: str) -> str:
        def substitute(found: re.Match[str]) -> str:
            variable, default = found.group(1), found.group(2)
            value = self.environ.get(variable)
            if value is not None and (value or default is None):
                return value
            if default is not None:
                return default
            raise ConfigProblem(
                f"{self.where}: ${{{variable}}} is not set: set it, or write ${{{variable}:-default}}"
            )

        return _VARIABLE.sub(substitute, text)


def _text(value: object, where: str, *, empty: bool = True) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise ConfigProblem(f"{where} must be {'text' if empty else 'non-empty text'}")
    if len(value) > MAX_TEXT_CHARS or "\0" in value:
        raise ConfigProblem(f"{where} is longer than {MAX_TEXT_CHARS:,} characters or holds a NUL")
    return value


def _texts(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_ARGS:
        raise ConfigProblem(f"{where} must be a list of at most {MAX_ARGS} texts")
    return [_text(item, where) for item in value]


def _mapping(value: object, where: str, key_pattern: re.Pattern[str]) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ConfigProblem(f"{where} must be an object of name: text")
    found = {}
    for key, item in value.items():
        if not key_pattern.fullmatch(key):
            raise ConfigProblem(f"{where}: {visible_text(key)[:60]!r} is not a valid name")
        number = isinstance(item, int | float) and not isinstance(item, bool)
        found[key] = _text(str(item) if number else item, f"{where}.{key}")
    return found
