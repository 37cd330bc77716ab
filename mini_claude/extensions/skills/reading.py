"""Reading a skill's or command's file as every start-up file is read: a regular file only (a FIFO
is never waited on), symlinks judged by where they lead (a project's file must stay in the project
and out of private places; the user's own may lead anywhere), never more than a cap: the header
(to list it) from its first HEADER_MAX_BYTES, the body (when it runs) up to BODY_MAX_BYTES."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mini_claude.core.config import protected_dirs
from mini_claude.core.files import safe_read
from mini_claude.core.frontmatter import codec as frontmatter
from mini_claude.core.frontmatter.block import locate_block
from mini_claude.core.prompts import extension_text
from mini_claude.safety.protections import PRIVATE_KEY_MARK, private_reason

HEADER_MAX_BYTES = 16 * 1024
BODY_MAX_BYTES = 100_000  # about 25,000 tokens: past that, the file says so where it was cut
FIRST_LINE_CHARS = 200


class NotReadable(Exception):
    """Why a file is not used, in one line (without its name: the caller names it)."""


@dataclass(frozen=True)
class Header:
    frontmatter: frontmatter.Frontmatter
    first_line: str  # of the body: a command without a description is described by it


def read_header(path: Path, root: Path) -> Header:
    """The frontmatter at the top of `path` (see the module doc); FileNotFoundError, NotReadable."""
    found = _read(path, root, HEADER_MAX_BYTES)
    block = locate_block(found.data, at_eof=not found.was_cut)
    if block.status in ("more", "unclosed") and found.was_cut:
        raise NotReadable(f"its frontmatter is not closed within the first {HEADER_MAX_BYTES // 1024} KB")
    if block.status == "unclosed":
        raise NotReadable(f"its frontmatter opened with --- on line {block.open_line} is never closed")
    end = block.block_end if block.status == "closed" else 0
    header = frontmatter.parse(found.data[:end]) if end else frontmatter.Frontmatter()
    rest = found.data[end : end + 4 * FIRST_LINE_CHARS].decode("utf-8", "replace")
    first = next((line.strip().lstrip("#").strip() for line in rest.splitlines() if line.strip()), "")
    return Header(header, first[:FIRST_LINE_CHARS])


def read_body(path: Path, root: Path) -> str:
    """The text after the frontmatter (cut at BODY_MAX_BYTES, saying so); NotReadable."""
    try:
        found = _read(path, root, BODY_MAX_BYTES)
    except FileNotFoundError:
        raise NotReadable("it is gone") from None
    parsed = frontmatter.parse(found.data)
    body = parsed.body.strip("\n")
    if found.was_cut:
        body += "\n" + extension_text(
            "extension_cut",
            file=path.name,
            max_kb=BODY_MAX_BYTES // 1000,
        )
    return body


def _read(path: Path, root: Path, limit: int) -> safe_read.FileBytes:
    home = Path(os.path.realpath(Path.home()))
    protected = [Path(os.path.realpath(folder)) for folder in protected_dirs()]

    def refuse(target: Path) -> str | None:
        # A project's file must not lead to a private place (the user's own may: stow, nix).
        if root == Path("/"):
            return None
        return private_reason(target, target, root, home, protected)

    try:
        found = safe_read.read_bytes(path, root, limit, refuse_target=refuse)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(path) from None
    except OSError as error:
        raise NotReadable(safe_read.describe(error)) from None
    if PRIVATE_KEY_MARK in found.data:
        raise NotReadable("it holds a private key")
    if b"\0" in found.data[:8192]:
        raise NotReadable("it is not text (it holds NUL bytes)")
    return found
