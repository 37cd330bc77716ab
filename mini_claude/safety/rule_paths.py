"""The path patterns of `Read(…)`, `Edit(…)` and `Write(…)` rules, gitignore-style as Claude Code
reads them: `//abs/path` from the root, `~/path` from home, `/path`, `./path` and `path` from the
project folder of the file the rule is in; `*` within a folder name, `**` across folders, `?`
one character, `[abc]` one of these. A pattern without a `/` but at its end matches at any depth
(`*.env`, `.env`), and a pattern that names a folder covers everything in it.

A path is judged after its symlinks are resolved, and, for deny and ask rules, also as it was
named: a link to a denied folder is denied, and a denied name reached through a link too.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


@dataclass(frozen=True)
class PathPattern:
    text: str
    roots: tuple[Path, ...]  # where it starts: as written and with symlinks resolved
    regex: re.Pattern[str]

    def matches(self, path: Path, *, resolved_only: bool) -> bool:
        """Whether `path` or a folder holding it matches. `path` is taken as resolved unless
        `resolved_only` is False, when its normalized name is tried too."""
        candidates = {Path(os.path.realpath(path))}
        if not resolved_only:
            candidates.add(Path(os.path.normpath(path)))
        for candidate in candidates:
            for root in self.roots:
                if not candidate.is_relative_to(root):
                    continue
                parts = candidate.relative_to(root).parts
                if any(self.regex.fullmatch("/".join(parts[:end])) for end in range(1, len(parts) + 1)):
                    return True
                if not parts and self.regex.fullmatch(""):
                    return True
        return False


def compile_path_pattern(spec: str, base: Path, home: Path) -> PathPattern:
    """The pattern `spec` of a rule whose relative paths start at `base`; ValueError when it
    cannot be read."""
    if "\0" in spec or "\n" in spec:
        raise ValueError("a path pattern holds no NUL or line break")
    if spec.startswith("//"):
        root, rest, anchored = Path("/"), spec[2:], True
    elif spec == "~" or spec.startswith("~/"):
        root, rest, anchored = home, spec[2:], True
    elif spec.startswith("/"):
        root, rest, anchored = base, spec[1:], True
    elif spec.startswith("./"):
        root, rest, anchored = base, spec[2:], True
    else:
        root, rest = base, spec
        anchored = "/" in rest.rstrip("/")
    parts = [part for part in PurePosixPath(rest.rstrip("/") or ".").parts if part != "."]
    while parts and parts[0] == "..":
        root, parts = root.parent, parts[1:]
    if ".." in parts:
        raise ValueError("`..` may only start a path pattern (../shared/**)")
    body = ""
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            body += ".*" if last else "(?:.*/)?"
        else:
            body += _component(part) + ("" if last else "/")
    if not parts:
        body = ".*"  # the folder itself: everything in it
    elif not anchored:
        body = "(?:.*/)?" + body
    roots = tuple(dict.fromkeys([Path(os.path.normpath(root)), Path(os.path.realpath(root))]))
    return PathPattern(spec, roots, re.compile(body, re.DOTALL))


def _component(part: str) -> str:
    out, index = [], 0
    while index < len(part):
        char = part[index]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and part.find("]", index + 2) != -1:
            end = part.find("]", index + 2)
            inside = part[index + 1 : end]
            negate = inside[:1] in ("!", "^")
            inside = inside[1:] if negate else inside
            out.append("[" + ("^" if negate else "") + re.escape(inside).replace("\\-", "-") + "]")
            index = end
        elif char == "\\" and index + 1 < len(part):
            index += 1
            out.append(re.escape(part[index]))
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)
