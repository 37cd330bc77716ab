"""The dot-folder scan has a budget per folder: five tool folders bigger than it (~/.cargo ~/.npm
~/.nvm ~/.pyenv ~/.rustup) do not hide a stow link in a small ~/.config
(`~/.config/gh/hosts.yml -> ../../dotfiles/gh/.config/gh/hosts.yml`, gh's token), and a huge
~/.local/lib does not hide one in ~/.local/share (an XDG folder: a budget of its own). Reading,
searching, CLAUDE.md and writing all judge the token as the dotfile it is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mini_claude.app.system_prompt import build_system_prompt
from mini_claude.safety.home_dotfiles import DOT_FOLDER_MAX_ENTRIES
from mini_claude.safety.permissions import HOME_DOTFILE_REASON
from tests.adversarial.cases import case
from tests.adversarial.world import snapshot
from tests.kit import empty_files
from tests.tool_harness import Tools

TOKEN = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
TOOL_FOLDERS = (".cargo", ".npm", ".nvm", ".pyenv", ".rustup")
STOW = {
    # link in home -> its target in ~/dotfiles
    ".config/gh/hosts.yml": "gh/.config/gh/hosts.yml",
    ".local/share/applications/evil.desktop": "apps/evil.desktop",
}
SUBFOLDERS = 10  # each tool folder: its entries within two levels, as a package cache has them


@pytest.fixture(scope="module")
def big_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once: 5 tool folders and ~/.local/lib, each past the per-folder budget."""
    home = tmp_path_factory.mktemp("bighome").resolve()
    per_folder = DOT_FOLDER_MAX_ENTRIES // SUBFOLDERS + 10
    for name in (*TOOL_FOLDERS, ".local/lib"):
        for i in range(SUBFOLDERS):
            folder = home / name / f"pkg{i}"
            folder.mkdir(parents=True)
            empty_files(folder, (f"f{j}" for j in range(per_folder)))
    for link, target in STOW.items():
        (home / "dotfiles" / target).parent.mkdir(parents=True, exist_ok=True)
        (home / "dotfiles" / target).write_text(f"github.com:\n    oauth_token: {TOKEN}\n")
        (home / link).parent.mkdir(parents=True, exist_ok=True)
        (home / link).symlink_to(os.path.relpath(home / "dotfiles" / target, (home / link).parent))
    (home / "dotfiles" / "README.md").write_text("my dotfiles\n")
    return home


@pytest.fixture
def home(big_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(big_home))
    for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(big_home)
    return big_home


@case(
    "paths",
    "5 tool folders past the per-folder budget beside a small ~/.config with a stow link to gh's "
    "token: read_file asks, grep from ~ skips it (and says so), a CLAUDE.md link to it stays out of "
    "the prompt",
)
def test_big_tool_folders_hide_no_stow_link_from_reads(home: Path) -> None:
    tools = Tools(home, "ask")
    (home / "CLAUDE.md").symlink_to("dotfiles/gh/.config/gh/hosts.yml")
    warnings: list[str] = []
    try:
        read = tools.run("read_file", file_path="dotfiles/gh/.config/gh/hosts.yml")
        grep = tools.run("grep_search", pattern="oauth_token", path="dotfiles")
        prompt = build_system_prompt(home, "", warn=warnings.append)
    finally:
        (home / "CLAUDE.md").unlink()

    assert read.is_error and TOKEN not in read.content
    assert [q.reason for q in tools.user.questions] == [HOME_DOTFILE_REASON]
    assert TOKEN not in grep.content and "home dotfiles under another path" in grep.content
    assert TOKEN not in prompt and len(warnings) == 1 and HOME_DOTFILE_REASON in warnings[0]


@case(
    "paths",
    "the same home, and a huge ~/.local/lib beside a stow link in ~/.local/share: writing either "
    "real file asks in accept-edits and bypass, started in ~ or ~/dotfiles",
)
@pytest.mark.parametrize("mode", ["accept-edits", "bypass"])
@pytest.mark.parametrize("start", ["~", "~/dotfiles"])
@pytest.mark.parametrize("target", STOW.values())
def test_big_folders_hide_no_stow_link_from_writes(home: Path, target: str, start: str, mode: str) -> None:
    project = home if start == "~" else home / "dotfiles"
    written = os.path.relpath(home / "dotfiles" / target, project)
    before = snapshot(home / "dotfiles")
    tools = Tools(project, mode, "n")

    result = tools.run("edit_file", file_path=written, old_string="github.com:\n", new_string="x:\n")

    assert result.is_error
    assert [(q.reason, q.allow_always) for q in tools.user.questions] == [(HOME_DOTFILE_REASON, False)]
    assert snapshot(home / "dotfiles") == before


@case("paths", "the same home: files in ~/dotfiles no dot entry leads to are ordinary (accept-edits)")
def test_other_dotfiles_repository_files_are_ordinary(home: Path) -> None:
    tools = Tools(home / "dotfiles", "accept-edits")

    result = tools.run("edit_file", file_path="README.md", old_string="my", new_string="our")

    assert not result.is_error and tools.user.questions == []
    (home / "dotfiles" / "README.md").write_text("my dotfiles\n")
