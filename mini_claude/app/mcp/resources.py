"""`@server:uri` in a message attaches an MCP server's resource (Claude Code's syntax), read
when the message is sent, its text wrapped as every server text is; and `/mcp__server__prompt
args` sends a server's prompt, its arguments given in order (quotes keep spaces together)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from mini_claude.app.mentions import CODE, Attached
from mini_claude.core.untrusted import visible_text
from mini_claude.extensions.skills.arguments import split_words
from mini_claude.tools.mcp import results
from mini_claude.tools.mcp.adapter import PREFIX, SEPARATOR

if TYPE_CHECKING:
    from mini_claude.app.mcp.servers import SessionServers

RESOURCE_MENTION = re.compile(r"(?<!\S)@([A-Za-z0-9_-]{1,40}):(\S+)")
TRAILING_PUNCTUATION = ",.;!?)]}'"
MAX_RESOURCES = 10  # per message
READ_TIMEOUT_S = 30.0


def find_resource_mentions(text: str, servers: SessionServers) -> list[tuple[str, str]]:
    """(server, uri) for each `@server:uri` naming a configured server, once each, in order."""
    code = [match.span() for match in CODE.finditer(text)]
    names = set(servers.manager.names)
    found: list[tuple[str, str]] = []
    for match in RESOURCE_MENTION.finditer(text):
        if any(start <= match.start() < end for start, end in code) or match.group(1) not in names:
            continue
        mention = (match.group(1), _uri(match.group(1), match.group(2), servers))
        if mention not in found:
            found.append(mention)
    return found


def attach_resources(mentions: list[tuple[str, str]], servers: SessionServers, attached: Attached) -> None:
    """Each resource read from its server, added to `attached` (or a line why not)."""
    if len(mentions) > MAX_RESOURCES:
        attached.problems.append(
            f"{len(mentions)} resources mentioned; at most {MAX_RESOURCES} go with one message."
        )
        return
    for server, uri in mentions:
        shown = f"@{server}:{visible_text(uri)}"
        try:
            result = servers.manager.read_resource(server, uri, READ_TIMEOUT_S)
        except TimeoutError:
            attached.problems.append(f"{shown} not attached: no answer within {READ_TIMEOUT_S:g} s")
            continue
        except Exception as error:  # not connected, no such resource: the server's words, made visible
            attached.problems.append(
                f"{shown} not attached: {visible_text(str(error) or type(error).__name__)[:200]}"
            )
            continue
        blocks = results.resource_blocks(result, server, uri)
        attached.blocks += blocks
        attached.shown.append(f"{shown} ({len(blocks[0]['text']):,} characters)")


def resource_uris(servers: SessionServers) -> dict[str, list[str]]:
    """The resources each connected server lists, for completion."""
    return {
        view.name: [str(resource.uri) for resource in view.resources]
        for view in servers.manager.views()
        if view.state == "connected"
    }


def prompt_commands(servers: SessionServers) -> dict[str, tuple[str, Any]]:
    """`mcp__server__prompt` → (server, the listed prompt) for every connected server's prompts."""
    found = {}
    for view in servers.manager.views():
        for prompt in view.prompts if view.state == "connected" else ():
            if re.fullmatch(r"[A-Za-z0-9_-]+", str(prompt.name)):
                found[SEPARATOR.join((PREFIX, view.name, str(prompt.name)))] = (view.name, prompt)
    return found


def prompt_arguments(prompt: Any, typed: str) -> dict[str, str]:
    """The words typed after the command, given to the prompt's arguments in order (the last
    takes what is left); ValueError naming what is missing."""
    words = split_words(typed)
    names = [argument.name for argument in prompt.arguments or []]
    if len(words) > len(names) and names:
        words = [*words[: len(names) - 1], " ".join(words[len(names) - 1 :])]
    given = dict(zip(names, words, strict=False))
    missing = [
        argument.name
        for argument in prompt.arguments or []
        if argument.required and argument.name not in given
    ]
    if missing:
        usage = " ".join(f"<{name}>" for name in names)
        raise ValueError(
            f"missing {', '.join(missing)}: /{PREFIX}{SEPARATOR}…{SEPARATOR}{prompt.name} {usage}"
        )
    return given


def _uri(server: str, written: str, servers: SessionServers) -> str:
    """The URI as written, less trailing punctuation that no listed resource ends with."""
    view = servers.manager.view(server)
    listed = {str(resource.uri) for resource in view.resources} if view is not None else set()
    if written in listed:
        return written
    stripped = written.rstrip(TRAILING_PUNCTUATION)
    return stripped or written
