"""Config git reads because of the environment: `GIT_CONFIG_GLOBAL` and `GIT_CONFIG_SYSTEM` name
other files, `GIT_CONFIG_COUNT`/`KEY_<n>`/`VALUE_<n>` and `GIT_CONFIG_PARAMETERS` (what `git -c`
hands to the programs it runs) give settings. The hooks folder and the config files they name ask
like those of a repository's own config; git itself says each one applies."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from mini_claude.safety.git_config import env_entries
from mini_claude.safety.permissions import GIT_CONFIG_REASON, GIT_HOOKS_REASON
from tests.adversarial import test_git_dirs as layouts
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.tool_harness import Tools

pytestmark = layouts.pytestmark
HOOKS = "[core]\n\thooksPath = {}\n"


def git_in(repo: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env={**os.environ, **env}
    )
    return done.stdout.strip()


def parameters_from_git(*settings: str) -> str:
    """GIT_CONFIG_PARAMETERS exactly as `git -c …` sets it for a program it runs."""
    options = [arg for setting in settings for arg in ("-c", setting)]
    listing = git_in(Path.cwd(), {}, *options, "-c", "alias.env=!env", "env")
    [line] = [line for line in listing.splitlines() if line.startswith("GIT_CONFIG_PARAMETERS=")]
    return line.removeprefix("GIT_CONFIG_PARAMETERS=")


# layout -> builds (env, the file written, the reason it must ask with) for `home` and the repository
Layout = Callable[[Path, Path], tuple[dict[str, str], Path, str]]


def global_file(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    (home / "cfg").mkdir()
    (home / "cfg" / "gitconfig").write_text("[user]\n\tname = me\n")
    return (
        {"GIT_CONFIG_GLOBAL": str(home / "cfg" / "gitconfig")},
        home / "cfg" / "gitconfig",
        GIT_CONFIG_REASON,
    )


def global_file_including(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    (home / "cfg").mkdir()
    (home / "cfg" / "gitconfig").write_text("[include]\n\tpath = team.inc\n")
    return (
        {"GIT_CONFIG_GLOBAL": str(home / "cfg" / "gitconfig")},
        home / "cfg" / "team.inc",
        GIT_CONFIG_REASON,
    )


def system_file(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    (repo / "etc").mkdir()
    (repo / "etc" / "gitconfig").write_text(HOOKS.format("ci-hooks"))
    env = {"GIT_CONFIG_SYSTEM": str(repo / "etc" / "gitconfig"), "GIT_CONFIG_NOSYSTEM": ""}
    return env, repo / "ci-hooks" / "pre-commit", GIT_HOOKS_REASON


def count_hooks_path(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.hooksPath", "GIT_CONFIG_VALUE_0": "~/hk"}
    return env, home / "hk" / "pre-commit", GIT_HOOKS_REASON


def count_relative_hooks_path(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    env = {"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "x"}
    env |= {"GIT_CONFIG_KEY_1": "CORE.HOOKSPATH", "GIT_CONFIG_VALUE_1": "tools/hooks"}  # keys: any case
    return env, repo / "tools" / "hooks" / "post-checkout", GIT_HOOKS_REASON


def count_include(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    env = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "include.path",
        "GIT_CONFIG_VALUE_0": str(home / "x.inc"),
    }
    return env, home / "x.inc", GIT_CONFIG_REASON


def parameters_hooks_path(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    env = {"GIT_CONFIG_PARAMETERS": parameters_from_git(f"core.hooksPath={repo / 'my hooks'}")}
    return env, repo / "my hooks" / "pre-commit", GIT_HOOKS_REASON


def parameters_include_with_a_quote(home: Path, repo: Path) -> tuple[dict[str, str], Path, str]:
    included = repo / "it's.inc"
    settings = ("alias.x=!echo", f"includeIf.gitdir:{repo}/.path={included}")
    return {"GIT_CONFIG_PARAMETERS": parameters_from_git(*settings)}, included, GIT_CONFIG_REASON


LAYOUTS: dict[str, Layout] = {
    "global_file": global_file,
    "global_file_including": global_file_including,
    "system_file": system_file,
    "count_hooks_path": count_hooks_path,
    "count_relative_hooks_path": count_relative_hooks_path,
    "count_include": count_include,
    "parameters_hooks_path": parameters_hooks_path,
    "parameters_include_with_a_quote": parameters_include_with_a_quote,
}


def git_reads(repo: Path, env: dict[str, str], written: Path) -> bool:
    """Whether git, in this environment, runs `written` as a hook or reads it as config."""
    hook = git_in(repo, env, "rev-parse", "--git-path", f"hooks/{written.name}")
    if Path(os.path.realpath(repo / hook)) == written:
        return True
    origins = git_in(repo, env, "config", "--show-origin", "--list", "--includes")
    return any(line.startswith(f"file:{written}\t") for line in origins.splitlines())


@case(
    "paths",
    "GIT_CONFIG_GLOBAL (and what it includes), GIT_CONFIG_SYSTEM, GIT_CONFIG_COUNT/KEY/VALUE, "
    "GIT_CONFIG_PARAMETERS (quotes, spaces, includeIf): their hooks folder and config files ask in "
    "accept-edits and bypass, started in ~ or a repo",
)
@pytest.mark.parametrize("mode", ["accept-edits", "bypass"])
@pytest.mark.parametrize("start", ["home", "repo"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_config_from_the_environment_counts(
    tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch, layout: str, start: str, mode: str
) -> None:
    home = isolated_env.resolve()
    repo = home / "proj"
    layouts.git("init", "-q", repo)
    env, target, reason = LAYOUTS[layout](home, repo)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.write_text("[user]\n\tname = x\n")  # a config git shows the origin of
    assert git_reads(repo, env, target), f"git does not use {target}"
    project = home if start == "home" else repo
    for variable, value in env.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.chdir(project)
    before = snapshot(tmp_path)
    tools = Tools(project, mode, "n")

    result = tools.run("write_file", file_path=str(target), content="[core]\n\tfsmonitor = id\n")

    assert result.is_error
    assert [(q.reason, q.allow_always) for q in tools.user.questions] == [(reason, False)]
    assert snapshot(tmp_path) == before


@case(
    "paths",
    "GIT_CONFIG_COUNT not a number, past the keys given, a relative include from the environment "
    "(git refuses it), GIT_CONFIG_PARAMETERS cut short: read as git reads them, nothing asks",
)
@pytest.mark.parametrize(
    "env",
    [
        {"GIT_CONFIG_COUNT": "many", "GIT_CONFIG_KEY_0": "core.hooksPath", "GIT_CONFIG_VALUE_0": "a"},
        {"GIT_CONFIG_COUNT": "3", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "a"},
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "include.path", "GIT_CONFIG_VALUE_0": "a/x.inc"},
        {"GIT_CONFIG_PARAMETERS": "'core.hooksPath'='a"},
    ],
    ids=["count_not_a_number", "count_past_the_keys", "relative_include", "parameters_cut_short"],
)
def test_odd_environment_settings(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> None:
    project = project_dir.resolve()
    layouts.git("init", "-q", project)
    for variable, value in env.items():
        monkeypatch.setenv(variable, value)
    tools = Tools(project, "accept-edits")

    results = [tools.run("write_file", file_path=path, content="x\n") for path in ("a/pre-commit", "a/x.inc")]

    assert [r.is_error for r in results] == [False, False], [r.content for r in results]
    assert tools.user.questions == []


@case(
    "paths",
    "GIT_CONFIG_PARAMETERS as git writes it (quotes, `\\!`, old `'key=value'` form) reads back exactly",
)
def test_parameters_read_as_git_wrote_them(project_dir: Path) -> None:
    written = parameters_from_git("core.hooksPath=/h k", "include.path=/it's", "alias.e=!env", "a.B.c=1")

    entries = env_entries({"GIT_CONFIG_PARAMETERS": written + " 'old.style=v'"})

    assert entries == [
        ("core", "hookspath", "/h k"),
        ("include", "path", "/it's"),
        ("alias", "e", "!env"),
        ("a.B", "c", "1"),
        ("alias", "env", "!env"),  # the alias that printed it
        ("old", "style", "v"),
    ]
