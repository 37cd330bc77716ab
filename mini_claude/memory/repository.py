"""What git knows about the project's repository, asked of git itself: which repository it is
(its first commits) and when files last changed in its history.

Only commands that run nothing of the repository's own: no hooks, no filters, no fsmonitor, no
pager, no signature check (`log.showSignature` would start gpg.program), each bounded in time. A
repository git cannot answer for (no git, not a repository, a timeout) answers None.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from mini_claude.safety.git import GitUnanswered, run_git

log = logging.getLogger("mini_claude")

ROOT_COMMITS_MAX = 20  # a history joined from more unrelated ones than this keeps the first few
# Settings a repository's config could use to run a program from the commands asked here (run_git
# already turns off the pager and fsmonitor).
_SAFE_CONFIG = ("-c", "log.showSignature=false", "-c", "diff.external=")


def git(root: Path, *args: str) -> str | None:
    """`git -C root args…`'s output, asked through safety.git.run_git (no prompt, no optional lock,
    no GIT_* variable pointing at another repository); None when git failed or took too long."""
    try:
        out = run_git(root, *_SAFE_CONFIG, *args)
    except GitUnanswered as error:
        log.info("git %s: %s", args[:1], error)
        return None
    return None if out is None else out.decode("utf-8", "surrogateescape")


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
    wanted = [f"{commit}^{{commit}}" for commit in commits]
    found = git(root, "rev-list", "--no-walk", "--ignore-missing", *wanted)
    return None if found is None else bool(found.split())


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
