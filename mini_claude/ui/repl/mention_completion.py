"""Completion of `@path` mentions: the entries of the folder being typed, relative to the working
directory (or from `/` and `~`), folders with a trailing `/` so completion goes on into them.
Dot entries are offered only once the name typed starts with a dot; a path with spaces or
quotes is inserted as `@"…"` (a folder's quote left open, so completion goes on inside it).
Names the terminal gate would change (`untrusted.visible_text`: controls, invisible characters,
blank-drawn fillers such as U+2800 and U+3164) are left out (they cannot be typed back), and one folder
offers at most MAX_COMPLETIONS of its first MAX_SCANNED entries. `@server:` completes the
resources an MCP server lists (and a server's name its `@server:`)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from mini_claude.core.untrusted import visible_text

MAX_COMPLETIONS = 100
MAX_SCANNED = 5_000  # entries of one folder looked at (node_modules can hold 100,000)
# The mention being typed at the cursor: `@` at the start of a word, then a bare or quoted path.
TYPED_MENTION = re.compile(r'(?<!\S)@("[^"\n]*|[^\s"]*)$')
NEEDS_QUOTES = re.compile(r"[\s'\"`\\]")


TYPED_RESOURCE = re.compile(r"([A-Za-z0-9_-]{1,40}):(\S*)")


class MentionCompleter(Completer):
    def __init__(self, project_dir: Path, resources: Callable[[], dict[str, list[str]]] = dict) -> None:
        """`resources`: each connected MCP server's resource URIs, asked at each completion."""
        self.project_dir = project_dir
        self.resources = resources

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        match = TYPED_MENTION.search(document.text_before_cursor)
        if match is None:
            return
        typed = match.group(1)
        yield from self._resources(typed)
        path = typed.removeprefix('"')
        folder, _, prefix = path.rpartition("/")
        if path.startswith("/") and not folder:
            folder = "/"
        base = Path(os.path.expanduser(folder or "."))
        if not base.is_absolute():
            base = self.project_dir / base
        for name, is_dir in _entries(base, prefix):
            head = f"{folder}/" if folder and folder != "/" else folder
            completed = head + name + ("/" if is_dir else "")
            if '"' in completed:
                continue  # a quote in the name cannot be written inside the quotes
            text = completed
            if NEEDS_QUOTES.search(completed) or typed.startswith('"'):
                # A folder's quote stays open, so completion goes on inside it.
                text = f'"{completed}' + ("" if is_dir else '"')
            yield Completion(
                "@" + text,
                start_position=-(len(typed) + 1),
                display=name + ("/" if is_dir else ""),
                display_meta="folder" if is_dir else "",
            )

    def _resources(self, typed: str) -> Iterator[Completion]:
        servers = self.resources()
        found = TYPED_RESOURCE.fullmatch(typed)
        if found is not None and found.group(1) in servers:
            uris = [uri for uri in servers[found.group(1)] if uri.startswith(found.group(2))]
            for uri in uris[:MAX_COMPLETIONS]:
                if visible_text(uri) == uri and not NEEDS_QUOTES.search(uri):
                    yield Completion(f"@{found.group(1)}:{uri}", start_position=-(len(typed) + 1),
                                     display=uri, display_meta="MCP resource")  # fmt: skip
            return
        for server, uris in servers.items():
            if uris and server.startswith(typed) and "/" not in typed:
                yield Completion(f"@{server}:", start_position=-(len(typed) + 1), display_meta="MCP server")


def _entries(base: Path, prefix: str) -> list[tuple[str, bool]]:
    """Entries of `base` whose names start with `prefix` (case-insensitively), folders first."""
    wanted = prefix.casefold()
    found: list[tuple[str, bool]] = []
    try:
        with os.scandir(base) as entries:
            for scanned, entry in enumerate(entries):
                if scanned >= MAX_SCANNED:
                    break
                name = entry.name
                if (name.startswith(".") and not prefix.startswith(".")) or visible_text(name) != name:
                    continue
                if name.casefold().startswith(wanted):
                    found.append((name, _is_dir(entry)))
    except OSError:
        return []  # a folder that cannot be listed offers nothing
    found.sort(key=lambda item: (not item[1], item[0].casefold()))
    return found[:MAX_COMPLETIONS]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # a symlink to a folder is completed into as well
    except OSError:
        return False
