"""The ways around "a write into a git directory asks": a HEAD symlink that leads nowhere, a bare
repository whose refs were packed, `objects`/`refs` that are symlinks, a `gitdir:` file or a
`commondir` leading to a folder that is not (yet) a git directory by itself; and the places a
repository's config makes as dangerous as its git dir: the `core.hooksPath` folder (relative,
absolute, from ~/.gitconfig, from an included file) and files pulled in by `include.path` /
`includeIf.*.path`. Git itself is asked whether each layout is real (a repository, its hooks
folder, a config it reads)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from mini_claude.safety import git as git_module
from mini_claude.safety.protections import (
    GIT_CONFIG_REASON,
    GIT_DIR_REASON,
    GIT_HOOKS_REASON,
    GIT_UNANSWERED_REASON,
)
from tests.adversarial import test_git_dirs as layouts
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.cli_harness import Cli
from tests.fake_api import FakeAnthropic, multi_tool_reply, text_reply, tool_reply
from tests.kit import must_finish_within, result_text, tool_results_in
from tests.tool_harness import Tools

pytestmark = layouts.pytestmark
git = layouts.git
is_repository = layouts.is_repository
HOOK = layouts.HOOK
FSMONITOR = '[core]\n\tfsmonitor = "echo PWNED > pwned; false"\n'


def commit(repo: Path) -> None:
    git(
        "-C",
        repo,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )


# --- git directories git accepts that the name and shape rules used to miss ------------------------


def dangling_head_gitdir_file(project: Path) -> Path:
    """The audit's layout: HEAD a symlink to refs/heads/main, which no commit has made yet."""
    git("-c", "core.preferSymlinkRefs=true", "init", "-q", project)
    (project / ".git").rename(project / ".gitstore")
    (project / ".git").write_text("gitdir: .gitstore\n")
    return project / ".gitstore"


def dangling_head_bare(project: Path) -> Path:
    """No pointer to it at all: only its HEAD symlink, into a refs/heads/main not made yet."""
    git("-c", "core.preferSymlinkRefs=true", "init", "-q", "--bare", project / "deps" / "thing")
    return project / "deps" / "thing"


def packed_bare(project: Path) -> Path:
    """A bare repository with a symlinked HEAD whose branch `git gc` packed: the loose ref is gone."""
    bare = project / "vendor-lib"
    git("-c", "core.preferSymlinkRefs=true", "init", "-q", "--bare", bare)
    scratch = project.parent / "scratch"
    git("init", "-q", scratch)
    commit(scratch)
    git("-C", scratch, "push", "-q", bare, "HEAD:refs/heads/main")
    git("-C", bare, "gc", "-q")
    assert not (bare / "refs" / "heads" / "main").exists()
    return bare


def objects_and_refs_symlinked(project: Path) -> Path:
    """`objects` and `refs` are symlinks to folders elsewhere: git enters them all the same."""
    bare = dangling_head_bare(project)
    store = project / "store"
    store.mkdir()
    for name in ("objects", "refs"):
        (bare / name).rename(store / name)
        (bare / name).symlink_to(store / name, target_is_directory=True)
    return bare


DANGLING = {
    "dangling_head_gitdir_file": (dangling_head_gitdir_file, ".gitstore/config"),
    "dangling_head_bare": (dangling_head_bare, "deps/thing/config"),
    "packed_bare": (packed_bare, "vendor-lib/hooks/pre-receive"),
    "objects_and_refs_symlinked": (objects_and_refs_symlinked, "deps/thing/hooks/post-update"),
}


@case(
    "paths",
    "git dirs git accepts by its own rules (HEAD symlink leading nowhere, packed bare, symlinked "
    "objects/refs): a write asks in accept-edits and bypass; 'n' → nothing written",
)
@pytest.mark.parametrize("mode", ["accept-edits", "bypass"])
@pytest.mark.parametrize("layout", DANGLING)
def test_git_dir_git_accepts_asks(tmp_path: Path, project_dir: Path, layout: str, mode: str) -> None:
    project = project_dir.resolve()
    build, written = DANGLING[layout]
    gitdir = build(project)
    head = gitdir / "HEAD"
    assert head.is_symlink() and not head.exists()  # the HEAD leads nowhere
    assert is_repository(gitdir)
    before = snapshot(tmp_path)
    tools = Tools(project, mode, "n")

    result = tools.run("write_file", file_path=written, content=HOOK)

    assert result.is_error
    assert [(q.reason, q.allow_always) for q in tools.user.questions] == [(GIT_DIR_REASON, False)]
    assert snapshot(tmp_path) == before


# --- following a gitdir: file and commondir ---------------------------------------------------------


def incomplete_store(folder: Path) -> None:
    """objects/ and refs/ but no HEAD: not a repository by itself."""
    (folder / "objects").mkdir(parents=True)
    (folder / "refs" / "heads").mkdir(parents=True)


@case(
    "paths",
    "a gitdir: file (in the project or a folder above it) pointing outside, at a folder git does "
    "not take yet: the write that completes it (HEAD) asks, in bypass too",
)
@pytest.mark.parametrize("started", [".", "src"])
def test_gitdir_file_target_outside_counts(tmp_path: Path, project_dir: Path, started: str) -> None:
    project = project_dir.resolve()
    store = tmp_path.resolve() / "elsewhere" / "store"
    incomplete_store(store)
    (project / ".git").write_text(f"gitdir: {os.path.relpath(store, project)}\n")
    (project / "src").mkdir()
    assert not is_repository(store)
    before = snapshot(tmp_path)
    tools = Tools(project / started, "bypass", "n")

    result = tools.run("write_file", file_path=str(store / "HEAD"), content="ref: refs/heads/main\n")

    assert result.is_error
    assert [q.reason for q in tools.user.questions] == [GIT_DIR_REASON]
    assert snapshot(tmp_path) == before
    (store / "HEAD").write_text("ref: refs/heads/main\n")  # had it gone through: git would use it
    assert is_repository(store)


@case(
    "paths",
    "commondir: a worktree's git dir whose common folder has no HEAD (git reads its config all the "
    "same): writing that config asks",
)
@pytest.mark.parametrize("mode", ["accept-edits", "bypass"])
def test_commondir_target_counts(tmp_path: Path, project_dir: Path, mode: str) -> None:
    project = project_dir.resolve()
    store = project / "store"
    incomplete_store(store)
    (store / "config").write_text("[core]\n\trepositoryformatversion = 0\n")
    worktree_git = project / "wtgit"
    worktree_git.mkdir()
    (worktree_git / "HEAD").write_text("ref: refs/heads/main\n")
    (worktree_git / "commondir").write_text("../store\n")
    (project / ".git").write_text("gitdir: wtgit\n")
    assert is_repository(worktree_git) and not is_repository(store)
    before = snapshot(tmp_path)
    tools = Tools(project, mode, "n")

    result = tools.run("write_file", file_path="store/config", content=FSMONITOR)

    assert result.is_error and [q.reason for q in tools.user.questions] == [GIT_DIR_REASON]
    assert snapshot(tmp_path) == before
    (store / "config").write_text(FSMONITOR)  # had it gone through: git would run it
    assert git("-C", project, "config", "core.fsmonitor") == "echo PWNED > pwned; false"


# --- the hooks folder core.hooksPath names -------------------------------------------------------------


def hooks_relative(project: Path) -> str:
    git("-C", project, "config", "core.hooksPath", ".husky")
    return ".husky/pre-commit"


def hooks_from_an_included_file(project: Path) -> str:
    """core.hooksPath set in a file the repository's config includes, a name with a space."""
    (project / "conf").mkdir()
    (project / "conf" / "team.inc").write_text('[core]\n\thooksPath = "scripts/git hooks"\n')
    git("-C", project, "config", "include.path", "../conf/team.inc")
    return "scripts/git hooks/pre-push"


def hooks_absolute(project: Path) -> str:
    folder = project.parent / "shared-hooks"
    git("-C", project, "config", "core.hooksPath", folder)
    return str(folder / "post-checkout")


def hooks_from_home_gitconfig(project: Path) -> str:
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text("[core]\n\thooksPath = ~/githooks\n")
    return str(home / "githooks" / "pre-commit")


def hooks_through_a_symlink(project: Path) -> str:
    git("-C", project, "config", "core.hooksPath", ".husky")
    (project / "tools" / "hooks").mkdir(parents=True)
    (project / ".husky").symlink_to("tools/hooks", target_is_directory=True)
    return "tools/hooks/pre-commit"


def hooks_from_a_subfolder(project: Path) -> str:
    """Started in src/: a relative hooksPath is still taken from the top of the work tree."""
    git("-C", project, "config", "core.hooksPath", ".husky")
    return "../.husky/pre-commit"


HOOKS: dict[str, Callable[[Path], str]] = {
    "relative": hooks_relative,
    "from_an_included_file": hooks_from_an_included_file,
    "absolute_outside": hooks_absolute,
    "from_home_gitconfig": hooks_from_home_gitconfig,
    "through_a_symlink": hooks_through_a_symlink,
    "from_a_subfolder": hooks_from_a_subfolder,
}


@case(
    "paths",
    "core.hooksPath (relative, absolute, from ~/.gitconfig or an included file, via a symlink, "
    "started in a subfolder): a hook write asks in bypass, one call at a time",
)
@pytest.mark.parametrize("layout", HOOKS)
def test_hooks_path_folder_asks(tmp_path: Path, project_dir: Path, layout: str) -> None:
    project = project_dir.resolve()
    git("init", "-q", project)
    (project / "src").mkdir()
    written = HOOKS[layout](project)
    started = project / "src" if layout == "from_a_subfolder" else project
    real = Path(os.path.realpath(started / written))
    # git itself runs its hooks from there:
    assert real.parent == Path(
        os.path.realpath(project / git("-C", project, "rev-parse", "--git-path", "hooks"))
    )
    tools = Tools(started, "bypass", "a")  # then "n"

    first = tools.run("write_file", file_path=written, content=HOOK)
    again = tools.run("write_file", file_path=written, content=HOOK + "# more\n")

    assert not first.is_error and again.is_error
    assert [(q.reason, q.allow_always) for q in tools.user.questions] == [(GIT_HOOKS_REASON, False)] * 2
    assert real.read_text() == HOOK  # 'a' was one yes: the second write did not happen


# --- config files the repository's config includes ------------------------------------------------------

INCLUDES = {
    # how the include is written into .git/config -> the file the model writes (relative to the project)
    "include_path": ("[include]\n\tpath = ../.gitconfig.shared\n", ".gitconfig.shared"),
    "include_if_false_now": ('[includeIf "gitdir:/nowhere/"]\n\tpath = ../ci/git.inc\n', "ci/git.inc"),
    "include_absolute": ("[include]\n\tpath = {project}/conf/git.inc\n", "conf/git.inc"),
    "include_nested": ("[include]\n\tpath = ../a.inc\n", "b.inc"),  # a.inc includes b.inc
}


@case(
    "paths",
    "include.path / includeIf.*.path (any condition, absolute, nested; the file not made yet): "
    "writing the included file asks in bypass",
)
@pytest.mark.parametrize("layout", INCLUDES)
def test_included_config_asks(tmp_path: Path, project_dir: Path, layout: str) -> None:
    project = project_dir.resolve()
    git("init", "-q", project)
    include, written = INCLUDES[layout]
    config = project / ".git" / "config"
    config.write_text(config.read_text() + include.replace("{project}", str(project)))
    if layout == "include_nested":
        (project / "a.inc").write_text("[include]\n\tpath = b.inc\n")
    before = snapshot(tmp_path)
    tools = Tools(project, "bypass", "n")

    result = tools.run("write_file", file_path=written, content=FSMONITOR)

    assert result.is_error
    assert [(q.reason, q.allow_always) for q in tools.user.questions] == [(GIT_CONFIG_REASON, False)]
    assert snapshot(tmp_path) == before
    if layout in ("include_path", "include_nested"):
        (project / written).write_text(FSMONITOR)  # had it gone through: git would run it
        assert git("-C", project, "config", "core.fsmonitor") == "echo PWNED > pwned; false"


@case(
    "paths",
    "config text that only looks like hooksPath/include (a comment, another section, a file git "
    "does not read) makes no file ask",
)
def test_config_lookalikes(project_dir: Path) -> None:
    project = project_dir.resolve()
    git("init", "-q", project)
    config = project / ".git" / "config"
    config.write_text(
        config.read_text()
        + "# hooksPath = scripts\n[alias]\n\thooksPath = scripts\n\tpath = docs/x.inc\n"
        + '[core "x"]\n\t; include.path = notes.txt\n'
    )
    (project / "docs").mkdir()
    (project / "docs" / "config").write_text("[core]\n\thooksPath = docs\n")  # not a git config
    tools = Tools(project, "accept-edits")

    results = [
        tools.run("write_file", file_path=path, content="x\n")
        for path in ("scripts/build.sh", "docs/x.inc", "docs/a.md", "notes.txt")
    ]

    assert [r.is_error for r in results] == [False] * 4, [r.content for r in results]
    assert tools.user.questions == []


@case(
    "paths",
    "a repository config git cannot read (a FIFO it would wait on, a folder, bad syntax): git does "
    "not answer, so a write in the project asks in bypass (once git gives up or fails), hangs nothing",
)
@pytest.mark.parametrize("config_kind", ["fifo", "folder", "bad_syntax"])
def test_unreadable_config_makes_writes_ask(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch, config_kind: str
) -> None:
    project = project_dir.resolve()
    git("init", "-q", project)
    config = project / ".git" / "config"
    config.unlink()
    if config_kind == "fifo":
        os.mkfifo(config)
        monkeypatch.setattr(git_module, "GIT_TIMEOUT_S", 0.5)  # git waits on it: don't wait 3 s
    elif config_kind == "folder":
        config.mkdir()
    else:
        config.write_text("[core\n\tbare = nope\n")
    tools = Tools(project, "bypass", "n")

    with must_finish_within(20):
        result = tools.run("write_file", file_path="README.md", content="x\n")

    assert result.is_error and [q.reason for q in tools.user.questions] == [GIT_UNANSWERED_REASON]
    assert not (project / "README.md").exists()


# --- the real program, as the audit drove it ------------------------------------------------------------


def tool_texts(fake: FakeAnthropic) -> list[str]:
    return [result_text(block) for block in tool_results_in([r for r in fake.requests if r.stream][-1])]


@case(
    "paths",
    "mini-claude -p --permission-mode accept-edits: .gitstore/config (dangling HEAD), a .husky hook "
    "and an included config are refused; git status runs nothing",
)
def test_print_mode_refuses_the_audit_writes(
    tmp_path: Path, project_dir: Path, api_env: FakeAnthropic
) -> None:
    project = project_dir.resolve()
    dangling_head_gitdir_file(project)
    git("-C", project, "config", "core.hooksPath", ".husky")
    git("-C", project, "config", "include.path", "../.gitconfig.shared")
    writes = [(".gitstore/config", FSMONITOR), (".husky/pre-commit", HOOK), (".gitconfig.shared", FSMONITOR)]
    api_env.stream_replies.extend(
        [
            multi_tool_reply([("write_file", {"file_path": f, "content": c}) for f, c in writes]),
            text_reply("done"),
        ]
    )
    before = snapshot(project)

    done = Cli(project).run("-p", "go", "--permission-mode", "accept-edits")

    assert done.returncode == 0, done.stderr
    texts = tool_texts(api_env)
    assert len(texts) == 3 and all("no one can give it" in text for text in texts), texts
    assert "run_shell included" in done.stderr  # the hint says what bypass would allow
    assert snapshot(project) == before
    subprocess.run(["git", "-C", str(project), "status"], capture_output=True, check=True)
    assert not (project / "pwned").exists()


@case(
    "paths",
    "run_shell is not judged by paths (as README says): bypass runs a command that writes a hook; the "
    "print-mode hint says the always-asked writes are the file tools' only",
)
def test_shell_is_not_judged_by_paths(project_dir: Path, api_env: FakeAnthropic) -> None:
    project = project_dir.resolve()
    git("init", "-q", project)
    command = "printf '#!/bin/sh\\n' > .git/hooks/pre-commit"
    cli = Cli(project)

    api_env.stream_replies.extend([tool_reply("run_shell", {"command": command}), text_reply("ok")])
    bypass = cli.run("-p", "go", "--permission-mode", "bypass")
    api_env.stream_replies.extend([tool_reply("run_shell", {"command": "touch made"}), text_reply("ok")])
    asked = cli.run("-p", "go", "--permission-mode", "accept-edits")

    assert bypass.returncode == 0 and (project / ".git" / "hooks" / "pre-commit").read_text() == "#!/bin/sh\n"
    assert asked.returncode == 0 and "permission denied" in asked.stderr
    assert (
        "run_shell included" in asked.stderr and "the file tools' writes to git directories" in asked.stderr
    )
