"""Home dotfiles GNU stow links INSIDE a real dot folder (`~/.ssh/config -> ../dotfiles/ssh/.ssh/config`,
`~/.config/nvim -> ../dotfiles/nvim/.config/nvim`): stow mirrors home's names in the package, so
the real file is found by asking where `~/<its dotted tail>` leads, at any depth, with nothing
scanned. CLAUDE.md symlinks judged by the same rule, and dot symlinks whose target holds the
project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mini_claude.app.system_prompt import build_system_prompt
from mini_claude.safety.protections import HOME_DOTFILE_REASON, OWN_SETTINGS_REASON
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.tool_harness import Tools

MARKER = "NESTED-4c1b"
SKIPPED_NOTE = "home dotfiles under another path"
NESTED = {
    # link in home -> (target relative to ~/dotfiles, its text)
    ".ssh/config": ("ssh/.ssh/config", f"Host *\n  # {MARKER} ssh\n"),
    ".config/nvim": ("nvim/.config/nvim", None),  # a folder: init.lua inside
    ".config/systemd/user/x.service": (  # 3 deep
        "systemd/.config/systemd/user/x.service",
        f"[Service]\n# {MARKER} unit\n",
    ),
    ".local/bin/tool": ("bin/.local/bin/tool", f"#!/bin/sh\n# {MARKER} tool\n"),
}


@pytest.fixture
def home(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = isolated_env.resolve()
    dotfiles = home / "dotfiles"
    (dotfiles / "nvim/.config/nvim").mkdir(parents=True)
    (dotfiles / "nvim/.config/nvim/init.lua").write_text(f"-- {MARKER} nvim\n")
    (dotfiles / "README.md").write_text(f"{MARKER} public readme\n")
    for link, (target, text) in NESTED.items():
        if text is not None:
            (dotfiles / target).parent.mkdir(parents=True, exist_ok=True)
            (dotfiles / target).write_text(text)
        (home / link).parent.mkdir(parents=True, exist_ok=True)
        (home / link).symlink_to(os.path.relpath(dotfiles / target, (home / link).parent))
    (home / "dotfiles" / "ssh" / ".ssh" / "known_hosts").write_text("no link leads here\n")
    monkeypatch.chdir(home)
    return home


def secrets_in(text: str) -> list[str]:
    return sorted(kind for kind in ("ssh", "nvim", "unit", "tool") if f"{MARKER} {kind}" in text)


REAL_FILES = [
    "ssh/.ssh/config",
    "nvim/.config/nvim/init.lua",
    "systemd/.config/systemd/user/x.service",
    "bin/.local/bin/tool",
]
STARTS = {"~": "dotfiles/", "~/dotfiles": ""}


def started(home: Path, start: str) -> Path:
    return home if start == "~" else home / "dotfiles"


@case(
    "paths",
    "stow links inside real ~/.ssh, ~/.config (a linked folder, a file 3 deep), ~/.local/bin: "
    "writing the real file asks in bypass; 'n' → unchanged",
)
@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("real", REAL_FILES)
def test_writing_a_nested_stow_target_asks(home: Path, start: str, real: str) -> None:
    before = snapshot(home / "dotfiles")
    tools = Tools(started(home, start), "bypass", "n")

    result = tools.run("write_file", file_path=STARTS[start] + real, content="ProxyCommand sh -c id\n")

    assert result.is_error
    assert [(q.reason, q.allow_always) for q in tools.user.questions] == [(HOME_DOTFILE_REASON, False)]
    assert snapshot(home / "dotfiles") == before


@case(
    "paths",
    "stow links inside real dot folders: reading the real file asks in ask mode; grep and list from ~ "
    "or ~/dotfiles skip them, say so, still find the rest",
)
@pytest.mark.parametrize("start", STARTS)
def test_reading_and_searching_nested_stow_targets(home: Path, start: str) -> None:
    tools = Tools(started(home, start), "ask")

    reads = [tools.run("read_file", file_path=STARTS[start] + real) for real in REAL_FILES]
    asked = [q.reason for q in tools.user.questions]
    grep = tools.run("grep_search", pattern=MARKER)
    listing = tools.run("list_files", pattern="**/*")

    assert all(read.is_error and secrets_in(read.content) == [] for read in reads)
    assert asked == [HOME_DOTFILE_REASON] * len(REAL_FILES)
    assert secrets_in(grep.content + listing.content) == [] and "init.lua" not in listing.content
    assert SKIPPED_NOTE in grep.content and SKIPPED_NOTE in listing.content
    assert "README.md:1:" in grep.content and len(tools.user.questions) == len(REAL_FILES)


@case(
    "paths",
    "files of ~/dotfiles no home entry leads to (a README, a stow package's file with no link to "
    "it): ordinary writes in accept-edits, started in ~/dotfiles",
)
def test_dotfiles_no_link_leads_to_are_ordinary(home: Path) -> None:
    tools = Tools(home / "dotfiles", "accept-edits")

    results = [
        tools.run("write_file", file_path=p, content="x\n") for p in ("README.md", "ssh/.ssh/known_hosts")
    ]

    assert [r.is_error for r in results] == [False, False], [r.content for r in results]
    assert tools.user.questions == []


# --- CLAUDE.md: one judgement with the file tools ---------------------------------------------------


CLAUDE_LINKS = {
    # name -> (started in, CLAUDE.md's link text, the secret it would leak)
    "home_to_stowed_key": ("~", "dotfiles/ssh/id_ed25519", "key"),
    "dotfiles_to_stowed_key": ("~/dotfiles", "ssh/id_ed25519", "key"),
    "home_to_nested_stow_target": ("~", "dotfiles/nvim/.config/nvim/init.lua", "nvim"),
    "dotfiles_via_dotdot": ("~/dotfiles", "nvim/../ssh/./id_ed25519", "key"),
    "home_to_own_data_folder": ("~", "xdgdata/mini-claude/history", "history"),
}


@case(
    "paths",
    "CLAUDE.md a symlink to what a dot symlink leads to (~/.ssh -> dotfiles/ssh), a nested stow target, "
    "via `..`, or mini-claude's own data folder: not in the prompt, one warning",
)
@pytest.mark.parametrize("name", CLAUDE_LINKS)
def test_claude_md_symlink_judged_as_permissions_judge_it(
    home: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    start, link, secret = CLAUDE_LINKS[name]
    (home / ".ssh").rename(home / "real-ssh")  # ~/.ssh a stow link to the whole folder instead
    (home / "dotfiles" / "ssh" / "id_ed25519").write_text(f"-----BEGIN KEY----- {MARKER} key\n")
    (home / ".ssh").symlink_to("dotfiles/ssh", target_is_directory=True)
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "xdgdata"))
    (home / "xdgdata/mini-claude").mkdir(parents=True)
    (home / "xdgdata/mini-claude/history").write_text(f"+DB_PASSWORD={MARKER} history\n")
    project = started(home, start)
    (project / "CLAUDE.md").symlink_to(link)
    warnings: list[str] = []

    prompt = build_system_prompt(project, "", warn=warnings.append)

    assert f"{MARKER} {secret}" not in prompt and "<project-instructions" not in prompt
    reason = OWN_SETTINGS_REASON if secret == "history" else HOME_DOTFILE_REASON
    assert len(warnings) == 1 and reason in warnings[0] and MARKER not in warnings[0]


@case(
    "paths",
    "CLAUDE.md as a file in a project inside ~/.config/nvim, or a symlink to a public file in ~/dotfiles: "
    "still read",
)
@pytest.mark.parametrize("layout", ["file_in_dot_folder", "link_to_public_file"])
def test_claude_md_that_is_no_dotfile_is_read(home: Path, layout: str) -> None:
    if layout == "file_in_dot_folder":
        project = home / ".config" / "nvim"  # the stow link: the project is where it leads
        (project / "CLAUDE.md").write_text("Use tabs.\n")
    else:
        project = home / "dotfiles"
        (project / "docs").mkdir()
        (project / "docs" / "AGENTS.md").write_text("Use tabs.\n")
        (project / "CLAUDE.md").symlink_to("docs/AGENTS.md")
    warnings: list[str] = []

    prompt = build_system_prompt(project.resolve(), "", warn=warnings.append)

    assert "Use tabs." in prompt and warnings == []


# --- a dot symlink whose target holds the project ------------------------------------------------------


@pytest.fixture
def work(isolated_env: Path, tmp_path: Path) -> Path:
    """~/.work -> <tmp>/work, and a project <tmp>/work/proj (the audit's false positive)."""
    work = (tmp_path / "work").resolve()
    (work / "proj").mkdir(parents=True)
    (work / "proj" / "a.py").write_text("x = 1\n")
    (work / "other.txt").write_text(f"{MARKER} other\n")
    (isolated_env / ".work").symlink_to(work, target_is_directory=True)
    (isolated_env / ".scratch").symlink_to(tmp_path.resolve(), target_is_directory=True)  # ~/.cache -> /tmp
    return work


@case(
    "paths",
    "~/.work -> /work (and ~/.scratch -> its parent) with the project /work/proj: project files read "
    "and write as usual (print mode too); files beside it in /work ask as home dotfiles",
)
def test_dot_link_holding_the_project_makes_no_dotfiles(work: Path) -> None:
    tools = Tools(work / "proj", "accept-edits")
    printed = Tools(work / "proj", "accept-edits")
    printed.ctx.permissions.ask = None  # print mode: nobody can answer

    read = tools.run("read_file", file_path="a.py")
    write = printed.run("write_file", file_path="a.py", content="x = 2\n")
    grep = tools.run("grep_search", pattern="x =")
    outside = tools.run("read_file", file_path="../other.txt")

    assert not read.is_error and not write.is_error and "a.py:1:" in grep.content
    assert (work / "proj" / "a.py").read_text() == "x = 2\n"
    assert outside.is_error and [q.reason for q in tools.user.questions] == [HOME_DOTFILE_REASON]


@case(
    "paths",
    "a dot link holding the project does not shelter a narrower one inside it (~/.ssh -> proj/keys), "
    "nor a dot link that IS the project (~/.dotfiles -> the project): those still ask",
)
@pytest.mark.parametrize("layout", ["narrower_link_inside", "link_is_the_project"])
def test_dot_link_holding_the_project_shelters_nothing_else(
    work: Path, isolated_env: Path, layout: str
) -> None:
    project = work / "proj"
    if layout == "narrower_link_inside":
        (project / "keys").mkdir()
        (project / "keys" / "id").write_text(f"{MARKER} ssh\n")
        (isolated_env / ".ssh").symlink_to(project / "keys", target_is_directory=True)
        name = "keys/id"
    else:
        (project / "id").write_text(f"{MARKER} ssh\n")
        (isolated_env / ".dotfiles").symlink_to(project, target_is_directory=True)
        name = "id"
    tools = Tools(project, "accept-edits", "n")

    read = tools.run("read_file", file_path=name)
    write = tools.run("write_file", file_path=name, content="x\n")

    assert read.is_error and write.is_error and secrets_in(read.content) == []
    assert [q.reason for q in tools.user.questions] == [HOME_DOTFILE_REASON] * 2
