"""The git config reader against git itself: a UTF-8 BOM at a config's start (Windows Notepad) and
relative includes taken from the folder of the path as git opened it, not from where a symlink
there leads (~/.gitconfig -> dotfiles/git/gitconfig). Every layout is checked with
`git config --show-origin --list`: each file git read is one we read, and the hooks folder it
names makes writes ask."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mini_claude.safety.git_config import read_configs
from mini_claude.safety.permissions import GIT_CONFIG_REASON, GIT_HOOKS_REASON
from tests.adversarial import test_git_dirs as layouts
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.tool_harness import Tools

pytestmark = layouts.pytestmark
git = layouts.git
HOOKS = "[core]\n\thooksPath = .githooks\n"


def bom_in_included(project: Path, home: Path) -> str:
    git("-C", project, "config", "include.path", "../.gitconfig.shared")
    (project / ".gitconfig.shared").write_text(HOOKS, encoding="utf-8-sig")
    return ".gitconfig.shared"


def bom_in_repo_config(project: Path, home: Path) -> str:
    config = project / ".git" / "config"
    config.write_bytes(b"\xef\xbb\xbf" + config.read_bytes() + HOOKS.encode())
    return ".git/config"


def bom_in_home_gitconfig(project: Path, home: Path) -> str:
    (home / ".gitconfig").write_bytes(b"\xef\xbb\xbf[include]\n\tpath = team.inc\n")
    (home / "team.inc").write_text(HOOKS)
    return str(home / "team.inc")


def symlinked_home_gitconfig(project: Path, home: Path) -> str:
    """The audit's layout: stow links ~/.gitconfig; its relative include is ~/shared.inc."""
    (home / "dotfiles" / "git").mkdir(parents=True)
    (home / "dotfiles" / "git" / "gitconfig").write_text("[include]\n\tpath = shared.inc\n")
    (home / ".gitconfig").symlink_to("dotfiles/git/gitconfig")
    (home / "shared.inc").write_text(HOOKS)
    (home / "dotfiles" / "git" / "shared.inc").write_text("[user]\n\tname = decoy\n")
    return str(home / "shared.inc")


def symlinked_include_chain(project: Path, home: Path) -> str:
    """An included file that is itself a symlink, including relatively: from the link's folder."""
    (project / "conf").mkdir()
    (project / "elsewhere").mkdir()
    (project / "elsewhere" / "team.inc").write_text("[include]\n\tpath = hooks.inc\n")
    (project / "conf" / "team.inc").symlink_to("../elsewhere/team.inc")
    (project / "conf" / "hooks.inc").write_text(HOOKS)
    git("-C", project, "config", "include.path", "../conf/team.inc")
    return "conf/hooks.inc"


def dotdot_after_a_symlinked_folder(project: Path, home: Path) -> str:
    """`link/../x.inc`: the kernel resolves `..` after the symlink, as git's open() does."""
    (project / "deep" / "inner").mkdir(parents=True)
    (project / "shortcut").symlink_to("deep/inner", target_is_directory=True)
    (project / "deep" / "x.inc").write_text(HOOKS)
    git("-C", project, "config", "include.path", "../shortcut/../x.inc")
    return "deep/x.inc"


LAYOUTS = {
    "bom_in_included": bom_in_included,
    "bom_in_repo_config": bom_in_repo_config,
    "bom_in_home_gitconfig": bom_in_home_gitconfig,
    "symlinked_home_gitconfig": symlinked_home_gitconfig,
    "symlinked_include_chain": symlinked_include_chain,
    "dotdot_after_a_symlinked_folder": dotdot_after_a_symlinked_folder,
}


def git_origins(project: Path) -> set[Path]:
    listing = git("-C", project, "config", "--show-origin", "--list")
    origins = {line.split("\t")[0] for line in listing.splitlines()}
    # Relative origins are from where git ran (-C project); "command line:" ones name no file.
    return {
        Path(os.path.realpath(project / o.removeprefix("file:"))) for o in origins if o.startswith("file:")
    }


@case(
    "paths",
    "a config starting with a UTF-8 BOM, a symlinked ~/.gitconfig or include with relative includes, "
    "`link/../x.inc`: every file git reads is read (git --show-origin); its hooksPath and included "
    "file ask in accept-edits and bypass",
)
@pytest.mark.parametrize("mode", ["accept-edits", "bypass"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_config_files_as_git_reads_them(
    project_dir: Path, isolated_env: Path, layout: str, mode: str
) -> None:
    project, home = project_dir.resolve(), isolated_env.resolve()
    git("init", "-q", project)
    included = LAYOUTS[layout](project, home)
    assert git("-C", project, "config", "core.hooksPath") == ".githooks"  # git applies it
    found = read_configs([home / ".gitconfig", project / ".git" / "config"], home)
    assert git_origins(project) <= set(found.config_files)
    before = snapshot(project)
    tools = Tools(project, mode, "n")

    hook = tools.run("write_file", file_path=".githooks/pre-commit", content="#!/bin/sh\nid\n")
    config = tools.run("write_file", file_path=included, content="[core]\n\tfsmonitor = id\n")

    assert hook.is_error and config.is_error
    reasons = [q.reason for q in tools.user.questions]
    assert reasons[0] == GIT_HOOKS_REASON and reasons[1] in (GIT_CONFIG_REASON, layouts.GIT_DIR_REASON)
    assert snapshot(project) == before


@case(
    "paths",
    "a BOM only counts at the very start: one after a newline, or a BOM inside a value, hides nothing",
)
def test_bom_elsewhere_is_what_git_makes_of_it(project_dir: Path, isolated_env: Path) -> None:
    project, home = project_dir.resolve(), isolated_env.resolve()
    git("init", "-q", project)
    config = project / ".git" / "config"
    config.write_text(config.read_text() + '[core]\n\thooksPath = "\ufeff.githooks"\n')

    found = read_configs([config], home)

    assert found.hooks_paths == [git("-C", project, "config", "core.hooksPath")]
