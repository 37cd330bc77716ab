"""Config files as git reads them, git asked (`git config --list --show-origin --includes`): a
symlinked ~/.gitconfig or include whose relative includes are taken from the folder of the path
as git opened it, `link/../x.inc`, a config of any size; the files and settings the environment
gives git (`GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_COUNT`/`KEY_<n>`/`VALUE_<n>`,
`GIT_CONFIG_PARAMETERS`, what `git -c` hands to the programs it runs) and the repository `GIT_DIR`
names. The hooks folder and the config files each names ask, in bypass: a git write asks before
the mode is looked at."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from mini_claude.safety.protections import GIT_CONFIG_REASON, GIT_DIR_REASON, GIT_HOOKS_REASON
from tests.adversarial import test_git_dirs as layouts
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.tool_harness import Tools

pytestmark = layouts.pytestmark
git = layouts.git
HOOKS = "[core]\n\thooksPath = .githooks\n"
FSMONITOR = "[core]\n\tfsmonitor = id\n"


def git_in(repo: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env={**os.environ, **env}
    )
    return done.stdout.strip()


def git_origins(repo: Path, env: dict[str, str] | None = None) -> set[Path]:
    """The real files git reads config from, in `repo` with `env`."""
    listing = git_in(repo, env or {}, "config", "--show-origin", "--list")
    origins = {line.split("\t")[0] for line in listing.splitlines()}
    # Relative origins are from the top of the work tree; "command line:" ones name no file.
    return {Path(os.path.realpath(repo / o.removeprefix("file:"))) for o in origins if o.startswith("file:")}


# --- files git reads, named as git opens them ------------------------------------------------------


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


def over_a_megabyte(project: Path, home: Path) -> str:
    """An included config padded past 1 MB, its hooksPath at the very end: git reads it whole."""
    git("-C", project, "config", "include.path", "../team.gitconfig")
    (project / "team.gitconfig").write_text("# " + "x" * (1 << 20) + "\n" + HOOKS)
    return "team.gitconfig"


LAYOUTS = {
    "symlinked_home_gitconfig": symlinked_home_gitconfig,
    "symlinked_include_chain": symlinked_include_chain,
    "dotdot_after_a_symlinked_folder": dotdot_after_a_symlinked_folder,
    "over_a_megabyte": over_a_megabyte,
}


@case(
    "paths",
    "a symlinked ~/.gitconfig or include with relative includes, `link/../x.inc`, a config over "
    "1 MB: the file git reads (git --show-origin) and the hooksPath it sets ask in bypass",
)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_config_files_as_git_reads_them(project_dir: Path, isolated_env: Path, layout: str) -> None:
    project, home = project_dir.resolve(), isolated_env.resolve()
    git("init", "-q", project)
    included = LAYOUTS[layout](project, home)
    assert git("-C", project, "config", "core.hooksPath") == ".githooks"  # git applies it
    assert Path(os.path.realpath(project / included)) in git_origins(project)
    before = snapshot(project)
    tools = Tools(project, "bypass", "n")

    hook = tools.run("write_file", file_path=".githooks/pre-commit", content="#!/bin/sh\nid\n")
    config = tools.run("write_file", file_path=included, content=FSMONITOR)

    assert hook.is_error and config.is_error
    assert [q.reason for q in tools.user.questions] == [GIT_HOOKS_REASON, GIT_CONFIG_REASON]
    assert snapshot(project) == before


# --- files and settings from the environment ------------------------------------------------------


def parameters_from_git(*settings: str) -> str:
    """GIT_CONFIG_PARAMETERS exactly as `git -c …` sets it for a program it runs."""
    options = [arg for setting in settings for arg in ("-c", setting)]
    listing = git_in(Path.cwd(), {}, *options, "-c", "alias.env=!env", "env")
    [line] = [line for line in listing.splitlines() if line.startswith("GIT_CONFIG_PARAMETERS=")]
    return line.removeprefix("GIT_CONFIG_PARAMETERS=")


# layout -> builds (env, the file written, the reason it must ask with) for `home` and the repository
Layout = Callable[[Path, Path], tuple[dict[str, str], Path, str]]


def global_file_including(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    (home / "cfg").mkdir()
    (home / "cfg" / "gitconfig").write_text("[include]\n\tpath = team.inc\n")
    return (
        {"GIT_CONFIG_GLOBAL": str(home / "cfg" / "gitconfig")},
        home / "cfg" / "team.inc",
        GIT_CONFIG_REASON,
    )


def global_file_not_made_yet(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    """GIT_CONFIG_GLOBAL names a file that does not exist: git reads it once it does."""
    return (
        {"GIT_CONFIG_GLOBAL": str(home / "cfg" / "gitconfig")},
        home / "cfg" / "gitconfig",
        GIT_CONFIG_REASON,
    )


def system_file(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    (repo / "etc").mkdir()
    (repo / "etc" / "gitconfig").write_text(HOOKS.replace(".githooks", "ci-hooks"))
    env = {"GIT_CONFIG_SYSTEM": str(repo / "etc" / "gitconfig"), "GIT_CONFIG_NOSYSTEM": ""}
    return env, repo / "ci-hooks" / "pre-commit", GIT_HOOKS_REASON


def count_hooks_path(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    env = {"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "x"}
    env |= {"GIT_CONFIG_KEY_1": "CORE.HOOKSPATH", "GIT_CONFIG_VALUE_1": "~/hk"}
    return env, home / "hk" / "pre-commit", GIT_HOOKS_REASON


def count_include(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    env = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "include.path",
        "GIT_CONFIG_VALUE_0": str(home / "x.inc"),
    }
    return env, home / "x.inc", GIT_CONFIG_REASON


def parameters_include_with_a_quote(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    included = repo / "it's.inc"
    settings = ("alias.x=!echo", f"includeIf.gitdir:{repo}/.path={included}")
    return {"GIT_CONFIG_PARAMETERS": parameters_from_git(*settings)}, included, GIT_CONFIG_REASON


def git_dir_elsewhere(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    """GIT_DIR names a repository outside the project whose hooks folder lies elsewhere again."""
    other = home / "other"
    git("init", "-q", other)
    git("-C", other, "config", "core.hooksPath", str(home / "shared-hooks"))
    return {"GIT_DIR": str(other / ".git")}, home / "shared-hooks" / "pre-commit", GIT_HOOKS_REASON


ENV_LAYOUTS: dict[str, Layout] = {
    "global_file_including": global_file_including,
    "global_file_not_made_yet": global_file_not_made_yet,
    "system_file": system_file,
    "count_hooks_path": count_hooks_path,
    "count_include": count_include,
    "parameters_include_with_a_quote": parameters_include_with_a_quote,
    "git_dir_elsewhere": git_dir_elsewhere,
}


def git_uses(repo: Path, env: dict[str, str], written: Path) -> bool:
    """Whether git, in this environment, runs `written` as a hook or reads it as config."""
    hook = git_in(repo, env, "rev-parse", "--git-path", f"hooks/{written.name}")
    return Path(os.path.realpath(repo / hook)) == written or written in git_origins(repo, env)


@case(
    "paths",
    "GIT_CONFIG_GLOBAL (what it includes, or not made yet), GIT_CONFIG_SYSTEM, GIT_CONFIG_COUNT/KEY/"
    "VALUE, GIT_CONFIG_PARAMETERS (a quote, includeIf), GIT_DIR elsewhere: their hooks folder and "
    "config files ask in bypass, started in ~ or a repo",
)
@pytest.mark.parametrize("start", ["home", "repo"])
@pytest.mark.parametrize("layout", ENV_LAYOUTS)
def test_config_from_the_environment_counts(
    tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch, layout: str, start: str
) -> None:
    home = isolated_env.resolve()
    repo = home / "proj"
    git("init", "-q", repo)
    env, target, reason = ENV_LAYOUTS[layout](home, repo)
    if layout != "global_file_not_made_yet":
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.write_text("[user]\n\tname = x\n")  # a config git shows the origin of
        assert git_uses(repo, env, target), f"git does not use {target}"
    project = home if start == "home" else repo
    for variable, value in env.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.chdir(project)
    before = snapshot(tmp_path)
    tools = Tools(project, "bypass", "n")

    result = tools.run("write_file", file_path=str(target), content=FSMONITOR)

    assert result.is_error
    assert [(q.reason, q.allow_always) for q in tools.user.questions] == [(reason, False)]
    assert snapshot(tmp_path) == before


@case(
    "paths",
    "GIT_DIR, GIT_WORK_TREE, GIT_CEILING_DIRECTORIES in the environment do not hide the repository "
    "git finds from the written folder: its git dir and hooksPath folder still ask in bypass",
)
def test_repository_variables_do_not_hide_the_written_ones(
    tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = project_dir.resolve()
    git("init", "-q", project / "app")
    git("-C", project / "app", "config", "core.hooksPath", ".husky")
    git("init", "-q", tmp_path / "decoy")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "decoy" / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path / "decoy"))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(project))
    before = snapshot(tmp_path)
    tools = Tools(project, "bypass", "n")

    results = [
        tools.run("write_file", file_path=p, content=FSMONITOR) for p in ("app/.husky/pre-commit", "x/.gIt")
    ]

    assert all(r.is_error for r in results)
    assert [q.reason for q in tools.user.questions] == [GIT_HOOKS_REASON, GIT_DIR_REASON]
    assert snapshot(tmp_path) == before
