"""What git knows about the project's repository, asked of git itself: which repository it is
(its first commits) and when files last changed in its history.

Only commands that run nothing of the repository's own: no hooks, no filters, no fsmonitor, no
pager, no signature check (`log.showSignature` would start gpg.program), each bounded in time and
output. A repository git cannot answer for (no git, not a repository, a timeout) answers None.
"""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger("mini_claude")

GIT_TIMEOUT_SECONDS = 5.0
GIT_OUTPUT_MAX_BYTES = 4 * 2**20
ROOT_COMMITS_MAX = 20  # a history joined from more unrelated ones than this keeps the first few
# Settings a repository's config could use to run a program from commands we run.
_SAFE_CONFIG = ("core.fsmonitor=false", "log.showSignature=false", "core.pager=cat", "diff.external=")


def git(root: Path, *args: str, stdin: str | None = None) -> str | None:
    """`git -C root args…`'s output; None when it failed, took too long or said too much."""
    command = ["git", "-C", str(root), "--no-pager"]
    for setting in _SAFE_CONFIG:
        command += ["-c", setting]
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            [*command, *args],
            input=stdin.encode("utf-8", "surrogateescape") if stdin is not None else None,
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            env=env,
            stdin=subprocess.DEVNULL if stdin is None else None,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        log.info("git %s: %s", args[:1], error)
        return None
    if done.returncode != 0 or len(done.stdout) > GIT_OUTPUT_MAX_BYTES:
        return None
    return done.stdout.decode("utf-8", "surrogateescape")


def root_commits(root: Path) -> list[str] | None:
    """The repository's first commits (those without a parent, reachable from HEAD), sorted; []
    before its first commit or in a shallow clone (whose first commit here is not the real one);
    None when git cannot tell."""
    shallow = git(root, "rev-parse", "--is-shallow-repository")
    if shallow is None:
        return None
    if shallow.strip() == "true" or git(root, "rev-parse", "--verify", "--quiet", "HEAD") is None:
        return []
    found = git(root, "rev-list", "--max-parents=0", "HEAD")
    return None if found is None else sorted(found.split())[:ROOT_COMMITS_MAX]


def holds_any(root: Path, commits: Sequence[str]) -> bool | None:
    """Whether the repository has any of `commits`; None when git cannot tell (not a repository,
    or a shallow clone, which may lack its first commits)."""
    shallow = git(root, "rev-parse", "--is-shallow-repository")
    if shallow is None or shallow.strip() == "true":
        return None
    answer = git(
        root, "cat-file", "--batch-check", stdin="".join(f"{commit}^{{commit}}\n" for commit in commits)
    )
    if answer is None:
        return None
    return any(line and not line.endswith(" missing") for line in answer.splitlines())


def last_commit_times(root: Path, paths: Sequence[str], since: float) -> dict[str, float]:
    """For each of `paths` (relative to `root`, a file or a folder) that a commit since `since`
    changed, the newest such commit's time (committer date)."""
    spec = [f":(literal){path}" for path in paths]
    out = git(root, "log", f"--since=@{int(since)}", "--format=%x00%ct", "--name-only", "-z", "--", *spec)
    newest: dict[str, float] = {}
    if not out:
        return newest
    when = 0.0
    for field in out.split("\0"):
        field = field.strip("\n")
        if field.isdigit():
            when = float(field)
        elif field:
            for path in paths:
                if field == path or field.startswith(path.rstrip("/") + "/"):
                    newest[path] = max(newest.get(path, 0.0), when)
    return newest


def differs_from_head(root: Path, paths: Sequence[str]) -> set[str] | None:
    """Of `paths` (existing files, relative to `root`), those whose bytes differ from HEAD's or that
    HEAD does not hold: edits not committed yet. Compared as raw bytes (`--no-filters`), so no
    filter a repository's config names is run."""
    if not paths:
        return set()
    head = git(root, "ls-tree", "-z", "HEAD", "--", *[f":(literal){path}" for path in paths])
    hashes = git(root, "hash-object", "--no-filters", "--", *paths)
    if head is None or hashes is None:
        return None
    committed = {}
    for entry in head.split("\0"):
        info, _, name = entry.partition("\t")
        if name and info.split()[1:2] == ["blob"]:
            committed[name] = info.split()[2]
    return {path for path, blob in zip(paths, hashes.split(), strict=False) if committed.get(path) != blob}
